//! Texts of the `[budget]`: the limit notice in place of a refused turn (the spend so far, the
//! limit) with its buttons "Continue today" / "Continue this month", and the press's toasts.

use std::collections::HashMap;

use kernel_common::config::Locale;

use super::{MAX_TITLE_CHARS, Texts, escape_truncated};

impl Texts {
    /// The notice for a turn a budget limit stopped (HTML), from the refusal's arguments
    /// (`period`, `provider`, `spent_usd`, `limit_usd`).
    pub fn budget_exceeded(self, args: &HashMap<String, String>) -> String {
        let arg = |name: &str| {
            escape_truncated(args.get(name).map_or("", String::as_str), MAX_TITLE_CHARS)
        };
        let monthly = args.get("period").is_some_and(|p| p == "monthly");
        let provider = arg("provider");
        let (spent, limit) = (arg("spent_usd"), arg("limit_usd"));
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

    /// The button lifting every limit for the rest of today.
    pub fn budget_continue_today(self) -> &'static str {
        self.pick("今天继续", "Continue today")
    }

    /// The button lifting every limit for the rest of the month.
    pub fn budget_continue_month(self) -> &'static str {
        self.pick("本月继续", "Continue this month")
    }

    /// The override was granted.
    pub fn budget_granted(self) -> &'static str {
        self.pick(
            "已继续：可以重新发送消息了",
            "Limit lifted: send your message again",
        )
    }

    /// The press named another period (stale) or was not Kernel's.
    pub fn budget_stale(self) -> &'static str {
        self.pick(
            "这个按钮已过期，预算周期已更新",
            "This button is stale: the budget period has changed",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_notice_in_both_languages() {
        let args: HashMap<String, String> = [
            ("period", "daily"),
            ("provider", ""),
            ("spent_usd", "3.00"),
            ("limit_usd", "2.40"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let zh = Texts::new(Locale::Zh).budget_exceeded(&args);
        assert!(
            zh.contains("今日预算") && zh.contains("$3.00") && zh.contains("$2.40"),
            "{zh}"
        );
        let mut monthly = args.clone();
        monthly.insert("period".into(), "monthly".into());
        monthly.insert("provider".into(), "<p>".into());
        let en = Texts::new(Locale::En).budget_exceeded(&monthly);
        assert!(en.contains("the monthly budget of &lt;p&gt;"), "{en}");
        assert_eq!(
            Texts::new(Locale::En).budget_continue_today(),
            "Continue today"
        );
    }
}
