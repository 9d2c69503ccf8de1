//! Texts of approvals: the message asking the owner to approve a risky action, its buttons,
//! what it says once closed, and the toasts of a press.

use kernel_common::config::Locale;
use kernel_proto::words::ApprovalOutcome;

use super::{Texts, escape_html};

/// Most UTF-16 units of the escaped text (escaping can make it five times longer; the whole
/// message must stay within Telegram's 4096).
const MAX_ESCAPED_UTF16: usize = 3000;

/// `text` escaped, cut to `budget` UTF-16 units; and how many of its characters it holds.
fn escape_within(text: &str, budget: usize) -> (String, u64) {
    let mut out = String::new();
    let (mut used, mut chars) = (0, 0u64);
    for c in text.chars() {
        let piece = escape_html(c.encode_utf8(&mut [0; 4]));
        let units: usize = piece.chars().map(char::len_utf16).sum();
        if used + units > budget {
            break;
        }
        used += units;
        chars += 1;
        out.push_str(&piece);
    }
    (out, chars)
}

impl Texts {
    /// The approval message: what will run (escaped, in a `<pre>` block), whether it was cut,
    /// and how long it waits.
    pub fn approval(self, action: &str, text: &str, text_chars: u64, timeout_secs: u64) -> String {
        let (escaped, shown) = escape_within(text, MAX_ESCAPED_UTF16);
        let cut = match (shown < text_chars, self.locale()) {
            (false, _) => String::new(),
            (true, Locale::Zh) => format!("\n（已截断：全文 {text_chars} 个字符）"),
            (true, Locale::En) => format!("\n(cut: the full text is {text_chars} characters)"),
        };
        let minutes = timeout_secs.div_ceil(60);
        let (head, tail) = match self.locale() {
            Locale::Zh => (
                "🔐 需要你批准",
                format!("{minutes} 分钟内未回应将视为拒绝。"),
            ),
            Locale::En => (
                "🔐 Needs your approval",
                format!("Not answered within {minutes} min counts as denied."),
            ),
        };
        format!(
            "<b>{head}</b>: <code>{}</code>\n<pre>{}</pre>{cut}\n{tail}",
            escape_html(action),
            escaped,
        )
    }

    /// The line that replaces the buttons once the approval closed (`decision` from agentd).
    pub fn approval_closed(self, decision: &str) -> &'static str {
        match ApprovalOutcome::parse(decision) {
            Some(ApprovalOutcome::Allowed) => self.pick("✅ 已批准", "✅ Allowed"),
            Some(ApprovalOutcome::Denied) => self.pick("🚫 已拒绝", "🚫 Denied"),
            Some(ApprovalOutcome::Expired) => self.said().approval_expired(),
            Some(ApprovalOutcome::Cancelled) | None => self.pick(
                "⏹ 任务已取消，未执行",
                "⏹ The task was cancelled; nothing ran",
            ),
        }
    }

    /// The "Allow once" button.
    pub fn approve_once_button(self) -> &'static str {
        self.said().approve_once()
    }

    /// The "Allow for this session" button.
    pub fn approve_session_button(self) -> &'static str {
        self.said().approve_for_session()
    }

    /// The "Deny" button.
    pub fn deny_button(self) -> &'static str {
        self.said().deny()
    }

    /// Toast: the answer was taken.
    pub fn approval_recorded(self) -> &'static str {
        self.pick("已记录", "Recorded")
    }

    /// Toast: the approval is no longer pending.
    pub fn approval_stale(self) -> &'static str {
        self.pick("这个请求已失效", "This request is no longer pending")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_escaped_and_fits_one_message_with_its_full_length_stated() {
        let texts = Texts::new(Locale::En);
        let html = texts.approval("send_file", "<b>x</b> & y", 12, 600);
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt; &amp; y"), "{html}");
        assert!(!html.contains("cut"), "{html}");
        let html = texts.approval("delegate_to_cli", &"&".repeat(1500), 2000, 600);
        let units: usize = html.chars().map(char::len_utf16).sum();
        assert!(units <= 4096, "{units}");
        assert!(html.contains("the full text is 2000 characters"), "{html}");
    }
}
