//! Every user-facing bot text, Chinese by default and English for `Locale::En`, as Telegram HTML.
//!
//! [`Texts`] is a plain value chosen by locale (no global state). Every dynamic value passes
//! through [`escape_html`]; inputs are plain Rust values (see [`listing`]) so this module stays
//! free of the gRPC edge.

mod approvals;
mod budget;
mod consolidation;
mod cooldown;
mod cut_off;
mod doctor;
mod embeddings;
mod errors;
mod help;
mod history_search;
mod intake;
mod jobs;
pub(crate) mod listing;
mod living;
mod memory_pages;
mod notes;
mod retry;
mod sandbox;
mod skills;
mod steering;
mod stop_offer;
mod topics;
mod usage;
mod watches;
mod web;

pub(crate) use budget::{BudgetLineView, CostLineView, SpendView};
pub(crate) use consolidation::ConsolidationView;
pub(crate) use embeddings::EmbeddingsEntry;
pub(crate) use history_search::HistoryFound;
pub(crate) use intake::Unsupported;
pub(crate) use jobs::JobEntry;
pub(crate) use listing::{
    CooldownEntry, McpEntry, MemoryEntry, ProviderEntry, ScheduleEntry, SessionEntry, StatusView,
};
pub(crate) use memory_pages::MemoryPageView;
pub(crate) use notes::MemoryAutoView;
pub(crate) use sandbox::{SandboxShown, SandboxView};
pub(crate) use skills::SkillEntry;
pub(crate) use topics::RunningEntry;
pub(crate) use usage::{UsageTotalsView, UsageView};

use std::collections::HashMap;

use kernel_common::config::Locale;
use kernel_common::said::Said;
use kernel_proto::words::FailoverReason;

/// Longest title shown in a listing (characters) before it is cut with "…".
pub(crate) const MAX_TITLE_CHARS: usize = 60;
/// Longest memory text shown in a listing (characters) before it is cut with "…".
pub(crate) const MAX_MEMORY_CHARS: usize = 200;
/// Longest error/detail text shown (characters) before it is cut with "…".
pub(crate) const MAX_DETAIL_CHARS: usize = 500;

/// Escapes `&`, `<` and `>` for Telegram's HTML parse mode (also `"` for attribute safety).
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// `text` cut to `max` characters (an ellipsis replacing the tail), then escaped.
pub(crate) fn escape_truncated(text: &str, max: usize) -> String {
    escape_html(&kernel_common::text::fit(text, max))
}

/// The bot's texts in one locale; times are shown in the owner's time zone (UTC until
/// [`Texts::with_timezone`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Texts {
    locale: Locale,
    timezone: Option<chrono_tz::Tz>,
}

impl Texts {
    pub const fn new(locale: Locale) -> Self {
        Self {
            locale,
            timezone: None,
        }
    }

    /// The same texts showing times in `timezone` (`general.timezone`).
    pub fn with_timezone(self, timezone: chrono_tz::Tz) -> Self {
        Self {
            timezone: Some(timezone),
            ..self
        }
    }

    pub fn locale(self) -> Locale {
        self.locale
    }

    /// An RFC 3339 time from agentd as the owner's local time, `YYYY-MM-DD HH:MM:SS` and the
    /// zone's abbreviation; text that is not such a time is returned as it is.
    pub fn local_time(self, rfc3339: &str) -> String {
        let Ok(time) = chrono::DateTime::parse_from_rfc3339(rfc3339.trim()) else {
            return rfc3339.to_owned();
        };
        let zone = self.timezone.unwrap_or(chrono_tz::UTC);
        time.with_timezone(&zone)
            .format("%Y-%m-%d %H:%M:%S %Z")
            .to_string()
    }

    /// `text` with every whitespace-separated RFC 3339 time in it shown as [`Texts::local_time`].
    pub fn local_times_in(self, text: &str) -> String {
        text.split(' ')
            .map(|word| self.local_time(word))
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub(crate) fn pick(self, zh: &'static str, en: &'static str) -> &'static str {
        match self.locale {
            Locale::Zh => zh,
            Locale::En => en,
        }
    }

    /// The placeholder sent when a turn starts.
    pub fn placeholder(self) -> &'static str {
        self.pick("正在生成回复…", "Generating a reply…")
    }

    /// Told once per busy window when a turn is already running.
    pub fn busy(self) -> &'static str {
        self.pick(
            "正在处理上一条，请稍后或 /cancel；/steer 补充给当前任务，/next 排到它之后",
            "Still working on the previous message; wait or /cancel — /steer adds to it, /next queues after it",
        )
    }

    /// `/cancel` succeeded; names the killed CLI when there was one.
    pub fn cancelled(self, killed_cli: Option<&str>) -> String {
        match killed_cli.filter(|cli| !cli.is_empty()) {
            None => self.pick("已取消", "Cancelled").to_owned(),
            Some(cli) => {
                let cli = escape_truncated(cli, MAX_TITLE_CHARS);
                match self.locale {
                    Locale::Zh => format!("已取消（已终止 <code>{cli}</code>）"),
                    Locale::En => format!("Cancelled (stopped <code>{cli}</code>)"),
                }
            }
        }
    }

    /// `/cancel` with no turn running.
    pub fn nothing_to_cancel(self) -> &'static str {
        self.pick("没有正在进行的任务", "Nothing is running")
    }

    /// agentd cannot be reached.
    pub fn agentd_unavailable(self) -> &'static str {
        self.pick(
            "助手后台不可用，稍后重试",
            "The assistant backend is unavailable; try again later",
        )
    }

    /// Progress: a CLI delegation started.
    pub fn cli_running(self) -> &'static str {
        self.pick("⏳ 正在执行任务…", "⏳ Running a task…")
    }

    /// Progress: a tool is running.
    pub fn tool_running(self, tool: &str) -> String {
        let tool = escape_truncated(tool, MAX_TITLE_CHARS);
        match self.locale {
            Locale::Zh => format!("🔧 正在使用工具 <code>{tool}</code>…"),
            Locale::En => format!("🔧 Using tool <code>{tool}</code>…"),
        }
    }

    /// Progress: the model call moved on from provider `from` to `to`; `reason` is agentd's code
    /// (`rate_limited`, `overloaded`, `auth`, `network`, `cooldown`).
    pub fn failed_over(self, from: &str, to: &str, reason: &str) -> String {
        let (from, to) = (
            escape_truncated(from, MAX_TITLE_CHARS),
            escape_truncated(to, MAX_TITLE_CHARS),
        );
        match self.locale {
            Locale::Zh => {
                let why = match FailoverReason::parse(reason) {
                    Some(FailoverReason::RateLimited) => "被限流",
                    Some(FailoverReason::Overloaded) => "过载",
                    Some(FailoverReason::Auth) => "密钥或账单被拒",
                    Some(FailoverReason::Network) => "连接失败",
                    Some(FailoverReason::Cooldown) => "冷却中",
                    None => "不可用",
                };
                format!("↪️ <code>{from}</code> {why}，改用 <code>{to}</code>…")
            }
            Locale::En => {
                let why = match FailoverReason::parse(reason) {
                    Some(FailoverReason::RateLimited) => "is rate limited",
                    Some(FailoverReason::Overloaded) => "is overloaded",
                    Some(FailoverReason::Auth) => "refused the key or billing",
                    Some(FailoverReason::Network) => "is unreachable",
                    Some(FailoverReason::Cooldown) => "is cooling down",
                    None => "is unavailable",
                };
                format!("↪️ <code>{from}</code> {why}; switching to <code>{to}</code>…")
            }
        }
    }

    /// Progress: the voice note is being transcribed.
    pub fn transcribing(self) -> &'static str {
        self.pick("🎙 正在识别语音…", "🎙 Transcribing the voice note…")
    }

    /// Progress: the voice reply is being synthesised.
    pub fn synthesizing(self) -> &'static str {
        self.pick("🔊 正在生成语音…", "🔊 Recording the voice reply…")
    }

    /// A turn failed; `error` is agentd's redacted message.
    pub fn turn_failed(self, error: &str) -> String {
        Said::new(self.locale).turn_failed(error)
    }

    /// The notice for a failed turn: `reason` with `args` in the owner's language, or
    /// [`Texts::turn_failed`] with agentd's `message` (shared with kernel-web: `Said`).
    pub fn turn_failure(
        self,
        reason: &str,
        args: &HashMap<String, String>,
        message: &str,
    ) -> String {
        Said::new(self.locale).turn_failure(reason, args, message)
    }

    /// The reply for agentd's refusal (shared with kernel-web: `Said`).
    pub fn refused(self, refusal: &kernel_proto::refused::Refused) -> String {
        Said::new(self.locale).refused(refusal)
    }

    /// The words kernel-tg shares with kernel-web, in the same locale.
    fn said(self) -> Said {
        Said::new(self.locale)
    }

    /// A turn cut off because agentd went away mid-turn.
    pub fn turn_interrupted(self) -> &'static str {
        self.pick(
            "⚠️ 助手后台中断，本次回复未完成，请重试",
            "⚠️ The assistant backend went away; this reply is incomplete, please retry",
        )
    }

    /// The model's reasoning, shown before its answer (`telegram.show_reasoning`): a title and
    /// an expandable blockquote, cut (with "…") to fit one message.
    pub fn reasoning(self, reasoning: &str) -> String {
        let title = self.pick("💭 思考过程", "💭 Reasoning");
        // Visible units left for the quote: Telegram's limit minus the title and a margin.
        let budget = kernel_render::MAX_CHUNK_UTF16 - 64;
        let mut units = 0;
        let chars = reasoning
            .trim()
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= budget
            })
            .count();
        format!(
            "{title}\n<blockquote expandable>{}</blockquote>",
            escape_truncated(reasoning.trim(), chars)
        )
    }

    /// The model answered with nothing to show.
    pub fn empty_answer(self) -> &'static str {
        self.pick("（模型没有返回文字）", "(the model returned no text)")
    }

    /// Some chunks of an answer could not be sent even after retries.
    pub fn delivery_failed(self, failed: usize, total: usize) -> String {
        match self.locale {
            Locale::Zh => format!("⚠️ 回复有 {failed}/{total} 段未能发送，请重试或查看日志"),
            Locale::En => format!(
                "⚠️ {failed} of {total} part(s) of the reply could not be sent; retry or check the logs"
            ),
        }
    }

    /// An attachment could not be fetched from Telegram.
    pub fn download_failed(self) -> String {
        self.pick(
            "⚠️ 无法从 Telegram 下载该文件，请重发",
            "⚠️ Could not download the file from Telegram; please send it again",
        )
        .to_owned()
    }

    /// A message kind kernel-tg does not handle (stickers, videos, locations…).
    pub fn unsupported(self) -> &'static str {
        self.pick(
            "暂不支持这种消息，请发送文字、图片、文件、语音或音频",
            "This kind of message is not supported; send text, a photo, a file, a voice note or \
             an audio file",
        )
    }

    /// An attachment over Telegram's download limit.
    pub fn file_too_large(self, max_mb: u32) -> String {
        match self.locale {
            Locale::Zh => format!("文件太大（上限 {max_mb} MB），未处理"),
            Locale::En => format!("The file is too large (limit {max_mb} MB); not processed"),
        }
    }
}

#[cfg(test)]
mod tests;
