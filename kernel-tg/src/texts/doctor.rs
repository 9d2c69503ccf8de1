//! The /doctor reply: agentd's check table (already in the owner's language) in a preformatted
//! block under a one-line verdict.

use super::{Texts, escape_truncated};

/// The longest table shown (a Telegram message holds 4,096 characters).
const MAX_TABLE_CHARS: usize = 3500;

impl Texts {
    /// The /doctor reply.
    pub fn doctor_report(self, table: &str, failed: bool) -> String {
        let head = if failed {
            self.pick(
                "<b>检查发现问题</b>（修复方法见各项）",
                "<b>Some checks failed</b> (each with its fix)",
            )
        } else {
            self.pick("<b>检查全部通过</b>", "<b>All checks passed</b>")
        };
        format!(
            "{head}\n<pre>{}</pre>",
            escape_truncated(table, MAX_TABLE_CHARS)
        )
    }
}
