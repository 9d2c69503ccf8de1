//! The /usage and /compact replies, and the context line of /status.

use std::fmt::Write as _;

use kernel_common::config::Locale;

use super::Texts;

/// Token counts and cost over one period.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsageTotalsView {
    pub calls: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// USD, when prices are configured or shipped.
    pub cost_usd: Option<f64>,
    /// Calls of models with no price.
    pub unpriced_calls: u64,
}

/// The /usage reply's figures.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsageView {
    pub today: UsageTotalsView,
    pub session: UsageTotalsView,
    pub last_30_days: UsageTotalsView,
}

impl Texts {
    /// The /usage reply: one block per period.
    pub fn usage_report(self, view: &UsageView) -> String {
        let mut out = String::from(self.pick("<b>用量</b>", "<b>Usage</b>"));
        for (title, t) in [
            (self.pick("今日", "Today"), &view.today),
            (self.pick("本会话", "This session"), &view.session),
            (self.pick("近 30 天", "Last 30 days"), &view.last_30_days),
        ] {
            let _ = write!(out, "\n\n<b>{title}</b>\n");
            let _ = match self.locale() {
                Locale::Zh => write!(
                    out,
                    "调用 {} 次；输入 {}，缓存读取 {}，缓存写入 {}，输出 {}",
                    t.calls,
                    tokens(t.input),
                    tokens(t.cache_read),
                    tokens(t.cache_write),
                    tokens(t.output)
                ),
                Locale::En => write!(
                    out,
                    "{} calls; input {}, cache read {}, cache write {}, output {}",
                    t.calls,
                    tokens(t.input),
                    tokens(t.cache_read),
                    tokens(t.cache_write),
                    tokens(t.output)
                ),
            };
            match (t.cost_usd, t.unpriced_calls) {
                (Some(cost), 0) => {
                    let _ = write!(out, "{}${cost:.4}", self.pick("\n费用 ", "\nCost "));
                }
                (Some(cost), n) => {
                    let _ = match self.locale() {
                        Locale::Zh => write!(out, "\n费用 ${cost:.4}，另有 {n} 次调用费用未知"),
                        Locale::En => {
                            write!(out, "\nCost ${cost:.4}, plus {n} calls of cost unknown")
                        }
                    };
                }
                (None, n) if n > 0 => {
                    out.push_str(self.pick("\n费用未知", "\nCost unknown"));
                }
                (None, _) => {}
            }
        }
        out
    }

    /// The /compact reply: how many tokens it saved.
    pub fn compacted(self, before: u64, after: u64, summary_rounds: u64) -> String {
        let saved = before.saturating_sub(after);
        match self.locale() {
            Locale::Zh => format!(
                "已压缩：上下文约 {} → {} tokens，节省约 {}；会话摘要现涵盖 {summary_rounds} 轮。",
                tokens(before),
                tokens(after),
                tokens(saved)
            ),
            Locale::En => format!(
                "Compacted: context about {} → {} tokens, {} saved; the session summary now covers {summary_rounds} rounds.",
                tokens(before),
                tokens(after),
                tokens(saved)
            ),
        }
    }

    /// The /status line: estimated context fill and whether a summary exists.
    pub fn context_fill(self, estimated: u64, budget: u64, has_summary: bool) -> String {
        let percent = estimated
            .saturating_mul(100)
            .checked_div(budget)
            .unwrap_or(0);
        let summary = match (self.locale(), has_summary) {
            (Locale::Zh, true) => "，有会话摘要",
            (Locale::Zh, false) => "，无会话摘要",
            (Locale::En, true) => ", summary present",
            (Locale::En, false) => ", no summary",
        };
        format!(
            "{}{} / {} tokens ({percent}%){summary}",
            self.pick("上下文：约 ", "Context: about "),
            tokens(estimated),
            tokens(budget)
        )
    }
}

/// `1234567` → `1,234,567`.
fn tokens(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_compact_and_fill_in_both_languages() {
        let zh = Texts::new(Locale::Zh);
        let en = Texts::new(Locale::En);
        let t = UsageTotalsView {
            calls: 3,
            input: 1_234_567,
            output: 10,
            cache_read: 20,
            cache_write: 30,
            cost_usd: Some(0.5),
            unpriced_calls: 0,
        };
        let view = UsageView {
            today: t,
            session: UsageTotalsView::default(),
            last_30_days: t,
        };
        let z = zh.usage_report(&view);
        assert!(
            z.contains("今日") && z.contains("1,234,567") && z.contains("$0.5000"),
            "{z}"
        );
        let e = en.usage_report(&view);
        assert!(e.contains("Last 30 days") && e.contains("3 calls"), "{e}");
        let unknown = UsageTotalsView {
            cost_usd: None,
            unpriced_calls: 2,
            ..t
        };
        let mixed = UsageTotalsView {
            unpriced_calls: 1,
            ..t
        };
        let view = UsageView {
            today: unknown,
            session: mixed,
            last_30_days: UsageTotalsView::default(),
        };
        let e = en.usage_report(&view);
        assert!(
            e.contains("Cost unknown") && e.contains("Cost $0.5000, plus 1 calls of cost unknown"),
            "{e}"
        );
        let z = zh.usage_report(&view);
        assert!(
            z.contains("费用未知") && z.contains("另有 1 次调用费用未知"),
            "{z}"
        );
        assert!(zh.compacted(5_000, 1_000, 12).contains("节省约 4,000"));
        assert!(en.compacted(5_000, 1_000, 12).contains("4,000 saved"));
        assert!(
            en.context_fill(500, 1_000, true)
                .contains("(50%), summary present")
        );
        assert!(zh.context_fill(0, 0, false).contains("无会话摘要"));
    }
}
