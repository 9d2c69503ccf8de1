//! Texts of the `[budget]`: the limit notice in place of a refused turn (the spend so far, the
//! limit) with its buttons "Continue today" / "Continue this month", the press's toasts, and
//! the budgets and per-model costs `/usage` adds.

use kernel_common::said::Said;
use kernel_proto::refused::BudgetExceeded;
use std::fmt::Write as _;

use kernel_common::config::Locale;

use super::{MAX_TITLE_CHARS, Texts, escape_truncated};

/// One `[budget]` limit in the current period.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BudgetLineView {
    pub monthly: bool,
    /// Empty: over every provider.
    pub provider: String,
    pub spent_usd: f64,
    pub limit_usd: f64,
    pub left_usd: f64,
}

/// Calls and cost of one provider's model (for one purpose, in the lists split by purpose).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CostLineView {
    pub provider: String,
    pub model: String,
    /// agentd's purpose name (`owner`, `task`, `failover`, `title`, `memory`, `summary`,
    /// `consolidation`); empty in the lists per model.
    pub purpose: String,
    pub calls: u64,
    /// `None`: cost unknown.
    pub cost_usd: Option<f64>,
}

/// What `/usage` adds about the budget and where the money goes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpendView {
    pub budgets: Vec<BudgetLineView>,
    pub override_today: bool,
    pub override_month: bool,
    pub today_by_model: Vec<CostLineView>,
    pub month_by_model: Vec<CostLineView>,
    pub today_by_purpose: Vec<CostLineView>,
    pub month_by_purpose: Vec<CostLineView>,
}

impl Texts {
    /// The budgets (what is left), the overrides, and today's and this month's cost per
    /// provider and model (HTML); empty when there is nothing to show.
    pub fn spend_report(self, view: &SpendView) -> String {
        let mut out = String::new();
        if !view.budgets.is_empty() {
            self.push_budgets(&mut out, view);
        }
        for (title, lines) in [
            (
                self.pick("今日按模型", "Today by model"),
                &view.today_by_model,
            ),
            (
                self.pick("本月按模型", "This month by model"),
                &view.month_by_model,
            ),
            (
                self.pick("今日按用途", "Today by purpose"),
                &view.today_by_purpose,
            ),
            (
                self.pick("本月按用途", "This month by purpose"),
                &view.month_by_purpose,
            ),
        ] {
            if !lines.is_empty() {
                self.push_costs(&mut out, title, lines);
            }
        }
        out
    }

    /// The budgets section: each limit's spend and what is left, then the overrides in force.
    fn push_budgets(self, out: &mut String, view: &SpendView) {
        let zh = self.locale() == Locale::Zh;
        let _ = write!(out, "\n\n<b>{}</b>", self.said().budgets());
        for b in &view.budgets {
            let period = match (zh, b.monthly) {
                (true, false) => "今日",
                (true, true) => "本月",
                (false, false) => "Today",
                (false, true) => "This month",
            };
            let who = if b.provider.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape_truncated(&b.provider, MAX_TITLE_CHARS))
            };
            let _ = if zh {
                write!(
                    out,
                    "\n{period}{who}：已用 ${:.2} / ${:.2}，剩余 ${:.2}",
                    b.spent_usd, b.limit_usd, b.left_usd
                )
            } else {
                write!(
                    out,
                    "\n{period}{who}: ${:.2} of ${:.2} spent, ${:.2} left",
                    b.spent_usd, b.limit_usd, b.left_usd
                )
            };
        }
        if view.override_today {
            out.push_str(self.pick(
                "\n已选择“今天继续”：今日不受限制",
                "\nContinue today: no limits today",
            ));
        }
        if view.override_month {
            out.push_str(self.pick(
                "\n已选择“本月继续”：本月不受限制",
                "\nContinue this month: no limits this month",
            ));
        }
    }

    /// One cost section (`title`): each model's (and purpose's) calls and cost.
    fn push_costs(self, out: &mut String, title: &str, lines: &[CostLineView]) {
        let zh = self.locale() == Locale::Zh;
        let _ = write!(out, "\n\n<b>{title}</b>");
        for l in lines {
            let cost = match l.cost_usd {
                Some(c) => format!("${c:.4}"),
                None => self.pick("费用未知", "cost unknown").to_owned(),
            };
            let mut name =
                escape_truncated(&format!("{}/{}", l.provider, l.model), MAX_TITLE_CHARS);
            if !l.purpose.is_empty() {
                name = format!("{} · {name}", self.purpose_label(&l.purpose));
            }
            let _ = if zh {
                write!(out, "\n{name}：{} 次，{cost}", l.calls)
            } else {
                write!(out, "\n{name}: {} calls, {cost}", l.calls)
            };
        }
    }

    /// What model calls were for, as `/usage` names it (an unknown name is shown escaped).
    pub fn purpose_label(self, purpose: &str) -> String {
        use kernel_proto::words::UsagePurpose as P;
        let Some(known) = P::parse(purpose) else {
            return escape_truncated(purpose, MAX_TITLE_CHARS);
        };
        let known = match known {
            P::Owner => self.pick("对话", "Your messages"),
            P::Task => self.pick("定时任务", "Scheduled tasks"),
            P::Watch => self.pick("监视", "Watches"),
            P::Failover => self.pick("故障转移", "Fail-over"),
            P::Title => self.pick("标题", "Titles"),
            P::Memory => self.pick("自动记忆", "Auto memory"),
            P::Summary => self.pick("摘要", "Summaries"),
            P::Consolidation => self.pick("记忆整理", "Memory consolidation"),
        };
        known.to_owned()
    }

    /// The notice for a turn a budget limit stopped (HTML): [`Said::budget_exceeded`].
    pub fn budget_exceeded(self, over: &BudgetExceeded) -> String {
        Said::new(self.locale()).budget_exceeded(over)
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

    /// The override was granted and the refused message runs now.
    pub fn budget_granted_running(self) -> &'static str {
        self.pick(
            "已继续：正在处理刚才那条消息",
            "Limit lifted: your message runs now",
        )
    }

    /// A cut-off answer's button while a budget limit is reached (the button stays).
    pub fn rerun_over_budget(self) -> &'static str {
        self.pick(
            "已达到预算上限：请先点“今天继续”或“本月继续”，再重新运行",
            "Over the budget limit: press Continue today or Continue this month first, then run it again",
        )
    }

    /// The press named another period (stale), a message run already, or was not Kernel's.
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
    use kernel_proto::words::BudgetPeriod;

    #[test]
    fn the_limit_notice_in_both_languages() {
        let daily = BudgetExceeded {
            period: BudgetPeriod::Daily,
            provider: String::new(),
            spent_usd: 3.0,
            limit_usd: 2.4,
            day: "day:2026-02-11".into(),
            month: "month:2026-02".into(),
        };
        let zh = Texts::new(Locale::Zh).budget_exceeded(&daily);
        assert!(
            zh.contains("今日预算") && zh.contains("$3.00") && zh.contains("$2.40"),
            "{zh}"
        );
        let monthly = BudgetExceeded {
            period: BudgetPeriod::Monthly,
            provider: "<p>".into(),
            ..daily
        };
        let en = Texts::new(Locale::En).budget_exceeded(&monthly);
        assert!(en.contains("the monthly budget of &lt;p&gt;"), "{en}");
        assert_eq!(
            Texts::new(Locale::En).budget_continue_today(),
            "Continue today"
        );
    }

    #[test]
    fn usage_adds_budgets_and_costs_per_model() {
        let view = SpendView {
            budgets: vec![BudgetLineView {
                monthly: false,
                provider: String::new(),
                spent_usd: 3.0,
                limit_usd: 2.4,
                left_usd: 0.0,
            }],
            override_today: true,
            override_month: false,
            today_by_model: vec![CostLineView {
                provider: "fake".into(),
                model: "m".into(),
                purpose: String::new(),
                calls: 3,
                cost_usd: None,
            }],
            month_by_model: Vec::new(),
            today_by_purpose: vec![CostLineView {
                provider: "titles".into(),
                model: "t".into(),
                purpose: "title".into(),
                calls: 1,
                cost_usd: Some(0.5),
            }],
            month_by_purpose: vec![CostLineView {
                provider: "p".into(),
                model: "m".into(),
                purpose: "<new>".into(),
                calls: 2,
                cost_usd: None,
            }],
        };
        let zh = Texts::new(Locale::Zh).spend_report(&view);
        assert!(zh.contains("今日：已用 $3.00 / $2.40，剩余 $0.00"), "{zh}");
        assert!(
            zh.contains("今天继续") && zh.contains("fake/m：3 次，费用未知"),
            "{zh}"
        );
        assert!(
            zh.contains("<b>今日按用途</b>\n标题 · titles/t：1 次，$0.5000"),
            "{zh}"
        );
        assert!(zh.contains("&lt;new&gt; · p/m：2 次，费用未知"), "{zh}");
        let en = Texts::new(Locale::En).spend_report(&view);
        assert!(
            en.contains("Today: $3.00 of $2.40 spent, $0.00 left"),
            "{en}"
        );
        assert!(en.contains("Titles · titles/t: 1 calls, $0.5000"), "{en}");
        assert!(
            Texts::new(Locale::En)
                .spend_report(&SpendView::default())
                .is_empty()
        );
    }
}
