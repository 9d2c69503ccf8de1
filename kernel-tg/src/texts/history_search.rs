//! `/history <words>`: the sessions where the words were said, each with its matching line, and
//! the Resume buttons' labels and toast; `/status`'s line while the conversation index is built.

use std::fmt::Write as _;

use super::{Texts, escape_html, escape_truncated};
use kernel_common::config::Locale;

/// Longest matching line shown (characters).
const MAX_LINE_CHARS: usize = 160;
/// Longest query echoed (characters).
const MAX_QUERY_SHOWN: usize = 60;

/// A session found by `/history <words>`, with its best matching line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryFound<'a> {
    /// `#n` in the listing the search made.
    pub number: u32,
    pub title: &'a str,
    /// Who said the line: `true` the owner, `false` Kernel.
    pub by_owner: bool,
    /// `YYYY-MM-DD HH:MM`.
    pub time: &'a str,
    pub line: &'a str,
}

impl Texts {
    /// The `/history <words>` reply: page `page` of `pages` (sessions found).
    pub fn history_found(
        self,
        query: &str,
        found: &[HistoryFound<'_>],
        (page, pages): (u32, u32),
    ) -> String {
        let query = escape_truncated(query, MAX_QUERY_SHOWN);
        if found.is_empty() {
            return match self.locale() {
                Locale::Zh => format!("没有找到说过“{query}”的会话"),
                Locale::En => format!("No session mentions “{query}”"),
            };
        }
        let mut out = match self.locale() {
            Locale::Zh => format!("<b>说过“{query}”的会话</b>"),
            Locale::En => format!("<b>Sessions mentioning “{query}”</b>"),
        };
        if pages > 1 {
            let _ = match self.locale() {
                Locale::Zh => write!(out, "（第 {page}/{pages} 页）"),
                Locale::En => write!(out, " (page {page}/{pages})"),
            };
        }
        out.push('\n');
        for f in found {
            let who = if f.by_owner {
                self.said().you()
            } else {
                "Kernel"
            };
            let line = escape_truncated(&f.line.replace('\n', " "), MAX_LINE_CHARS);
            let _ = write!(
                out,
                "\n#{} {}\n{} {who}: {line}\n",
                f.number,
                self.title(f.title),
                escape_html(f.time),
            );
        }
        out.push_str(self.pick(
            "\n点按钮或 /resume #n 继续该会话",
            "\nPress a button or send /resume #n to continue a session",
        ));
        out
    }

    /// `/status`'s line while the conversation index catches up with stored messages (empty
    /// once it has).
    pub fn history_index_line(self, indexed: u64, messages: u64) -> String {
        if indexed >= messages {
            return String::new();
        }
        match self.locale() {
            Locale::Zh => format!("\n对话索引：正在建立，已处理 {indexed}/{messages} 条消息"),
            Locale::En => {
                format!("\nConversation index: building, {indexed}/{messages} messages done")
            }
        }
    }

    /// A Resume button's label.
    pub fn resume_button(self, number: u32) -> String {
        match self.locale() {
            Locale::Zh => format!("继续 #{number}"),
            Locale::En => format!("Resume #{number}"),
        }
    }

    /// The toast after a Resume button was pressed.
    pub fn resumed_toast(self) -> &'static str {
        self.pick("已切换到该会话", "Session resumed")
    }

    /// The toast of a Resume button whose session is gone, or of a page button whose search is
    /// no longer kept.
    pub fn resume_stale(self) -> &'static str {
        self.pick(
            "这个按钮已过期，请重新搜索",
            "This button is out of date; search again",
        )
    }
}
