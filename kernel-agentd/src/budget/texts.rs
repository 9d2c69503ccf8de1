//! What the owner is told about the budget, in `general.locale`: the warning at `warn_at`, the
//! notice of scheduled tasks skipped while over the limit, and the English refusal message
//! (the gRPC message; kernel-tg words the refusal from its reason and arguments).

use kernel_common::config::Locale;

use super::{LimitState, PeriodKind};

/// The reason of a budget refusal (a `Refusal` and a failed outbox item).
pub const BUDGET_EXCEEDED: &str = kernel_proto::words::FailureReason::BudgetExceeded.as_str();

/// `$1.23`.
pub fn usd(v: f64) -> String {
    format!("${v:.2}")
}

fn scope(locale: Locale, l: &LimitState) -> String {
    match (locale, l.period, &l.provider) {
        (Locale::Zh, PeriodKind::Day, None) => "今日预算".to_owned(),
        (Locale::Zh, PeriodKind::Month, None) => "本月预算".to_owned(),
        (Locale::Zh, PeriodKind::Day, Some(p)) => format!("{p} 的今日预算"),
        (Locale::Zh, PeriodKind::Month, Some(p)) => format!("{p} 的本月预算"),
        (Locale::En, PeriodKind::Day, None) => "the daily budget".to_owned(),
        (Locale::En, PeriodKind::Month, None) => "the monthly budget".to_owned(),
        (Locale::En, PeriodKind::Day, Some(p)) => format!("the daily budget of {p}"),
        (Locale::En, PeriodKind::Month, Some(p)) => format!("the monthly budget of {p}"),
    }
}

/// The one notice per period and limit at `warn_at`.
pub fn warning(locale: Locale, l: &LimitState) -> String {
    let percent = if l.limit_usd > 0.0 {
        (l.spent_usd / l.limit_usd * 100.0).floor()
    } else {
        100.0
    };
    match locale {
        Locale::Zh => format!(
            "💰 已用{} {}（{percent}%），上限 {}，剩余 {}。达到上限后将暂停新的对话、定时任务和后台模型调用。",
            scope(locale, l),
            usd(l.spent_usd),
            usd(l.limit_usd),
            usd(l.left_usd())
        ),
        Locale::En => format!(
            "💰 {} is {percent}% used: {} of {}, {} left. At the limit new turns, scheduled tasks and background model work pause.",
            capitalise(&scope(locale, l)),
            usd(l.spent_usd),
            usd(l.limit_usd),
            usd(l.left_usd())
        ),
    }
}

/// The notice that scheduled task `task` was skipped while over `l`.
pub fn task_skipped(locale: Locale, task: &str, l: &LimitState) -> String {
    match locale {
        Locale::Zh => format!(
            "⏸ 已超出{}（已用 {}，上限 {}），定时任务未运行：{task}",
            scope(locale, l),
            usd(l.spent_usd),
            usd(l.limit_usd)
        ),
        Locale::En => format!(
            "⏸ Over {} ({} of {}): the scheduled task did not run: {task}",
            scope(locale, l),
            usd(l.spent_usd),
            usd(l.limit_usd)
        ),
    }
}

/// The one-line footer under an answer (`telegram.show_cost`): the turn's tokens and cost
/// (`None`: the model has no price), Markdown.
pub fn cost_footer(locale: Locale, tokens: u64, cost_usd: Option<f64>) -> String {
    match (locale, cost_usd) {
        (Locale::Zh, Some(c)) => format!("\n\n*💰 本次 {tokens} tokens，${c:.4}*"),
        (Locale::Zh, None) => format!("\n\n*💰 本次 {tokens} tokens，费用未知*"),
        (Locale::En, Some(c)) => format!("\n\n*💰 This answer: {tokens} tokens, ${c:.4}*"),
        (Locale::En, None) => format!("\n\n*💰 This answer: {tokens} tokens, cost unknown*"),
    }
}

/// The English refusal (the gRPC message and the failed item's message).
pub fn refusal_message(l: &LimitState) -> String {
    format!(
        "over {}: {} spent of {}; nothing new starts until the next period or an override \
         (GrantBudgetOverride)",
        scope(Locale::En, l),
        usd(l.spent_usd),
        usd(l.limit_usd)
    )
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
