//! The owner-facing words both adapters say, defined once in Chinese and English: agentd's
//! failed turns (`TurnFailed.reason`/`args`, `failures`) and refusals (`Refusal.reason`/`args`,
//! `refusals`), and the budget notice, said from the typed words of `kernel_proto::words`.
//! [`Said`] writes Telegram-safe HTML (every dynamic value escaped, only `<code>` added);
//! [`plain`] turns it into the plain text kernel-web shows.

mod failures;
mod labels;
mod refusals;

use kernel_proto::refused::BudgetExceeded;
use kernel_proto::words::BudgetPeriod;

use crate::config::Locale;

/// Longest name-like argument shown (characters) before it is cut with "…".
pub const MAX_TITLE_CHARS: usize = 60;
/// Longest error/detail text shown (characters) before it is cut with "…".
pub const MAX_DETAIL_CHARS: usize = 500;

/// Escapes `&`, `<` and `>` for Telegram's HTML parse mode (also `"` for attribute safety).
pub fn escape_html(text: &str) -> String {
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

/// `text` cut to `max` characters (`crate::text::fit`), then escaped.
pub fn escape_truncated(text: &str, max: usize) -> String {
    escape_html(&crate::text::fit(text, max))
}

/// The plain text of what [`Said`] wrote: its `<code>`/`<b>` tags dropped, entities read back.
pub fn plain(html: &str) -> String {
    let mut out = html.to_owned();
    for tag in ["<code>", "</code>", "<b>", "</b>", "<i>", "</i>"] {
        out = out.replace(tag, "");
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The shared words in one locale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Said {
    locale: Locale,
}

impl Said {
    pub fn new(locale: Locale) -> Self {
        Self { locale }
    }

    pub fn locale(self) -> Locale {
        self.locale
    }

    fn pick<T>(self, zh: T, en: T) -> T {
        self.locale.pick(zh, en)
    }

    /// A failed turn with agentd's (English) `error`, for a reason this build cannot say.
    pub fn turn_failed(self, error: &str) -> String {
        let error = escape_truncated(error, MAX_DETAIL_CHARS);
        match self.locale {
            Locale::Zh => format!("⚠️ 出错了：{error}"),
            Locale::En => format!("⚠️ Something went wrong: {error}"),
        }
    }

    /// The notice for a turn a budget limit stopped (HTML), from the refusal's (or failure's)
    /// arguments.
    pub fn budget_exceeded(self, over: &BudgetExceeded) -> String {
        let monthly = match over.period {
            BudgetPeriod::Daily => false,
            BudgetPeriod::Monthly => true,
        };
        let provider = escape_truncated(&over.provider, MAX_TITLE_CHARS);
        let (spent, limit) = (
            format!("{:.2}", over.spent_usd),
            format!("{:.2}", over.limit_usd),
        );
        match self.locale() {
            Locale::Zh => {
                let what = match (monthly, provider.is_empty()) {
                    (false, true) => "今日预算".to_owned(),
                    (true, true) => "本月预算".to_owned(),
                    (false, false) => format!("{provider} 的今日预算"),
                    (true, false) => format!("{provider} 的本月预算"),
                };
                format!(
                    "⛔ 已达到{what}上限：已用 ${spent}，上限 ${limit}。这条消息没有发给模型。\
                     点击下方按钮继续使用，或等到下个周期。"
                )
            }
            Locale::En => {
                let what = match (monthly, provider.is_empty()) {
                    (false, true) => "the daily budget".to_owned(),
                    (true, true) => "the monthly budget".to_owned(),
                    (false, false) => format!("the daily budget of {provider}"),
                    (true, false) => format!("the monthly budget of {provider}"),
                };
                format!(
                    "⛔ {what} is used up: ${spent} spent of ${limit}. This message was not sent \
                     to the model. Press a button below to go on, or wait for the next period."
                )
            }
        }
    }
}
