//! The budget service over a real store and ledger, with a clock the tests move.

use std::sync::{Arc, Mutex};

use chrono::{Duration, Utc};

use super::*;
use crate::conversation::Usage;
use crate::test_support::{TestEnv, env};

/// `m1` of `main` costs $1 per million input tokens; the daily limit is $2.40 (warned from
/// $1.92), the monthly $100.
const BUDGET: &str = r#"
[providers.main.prices.m1]
input = 1.0
output = 0.0

[budget]
daily = 2.4
monthly = 100
"#;

struct Fixture {
    env: TestEnv,
    ledger: UsageLedger,
    offset: Arc<Mutex<Duration>>,
    session: i64,
}

impl Fixture {
    async fn new(extra: &str) -> Fixture {
        let env = env(extra).await;
        let ledger = UsageLedger::new(&env.config, env.store.clone());
        let session = env.store.create_session("main", "m1").await.unwrap().id;
        Fixture {
            env,
            ledger,
            offset: Arc::new(Mutex::new(Duration::zero())),
            session,
        }
    }

    /// A budget service (a fresh one is what a restart builds).
    fn budget(&self) -> Budget {
        let offset = self.offset.clone();
        Budget::new(
            self.env.config.budget.clone(),
            self.env.config.general.timezone,
            self.ledger.clone(),
            self.env.store.clone(),
            Arc::new(move || Utc::now() + *offset.lock().unwrap()),
        )
    }

    /// One model call of `m1` costing $1.
    async fn spend_a_dollar(&self) {
        let usage = Usage {
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        self.ledger
            .record(
                Some(self.session),
                ("main", "m1"),
                crate::usage::Purpose::Owner,
                &usage,
            )
            .await;
    }

    fn shift(&self, by: Duration) {
        *self.offset.lock().unwrap() += by;
    }
}

#[tokio::test]
async fn warned_once_at_warn_at_then_over_at_the_limit_and_still_over_after_a_restart() {
    let f = Fixture::new(BUDGET).await;
    let budget = f.budget();
    f.spend_a_dollar().await;
    assert!(
        budget.warnings_due().await.is_empty(),
        "41 % warns of nothing"
    );
    assert!(budget.over().await.is_none());
    f.spend_a_dollar().await;
    let due = budget.warnings_due().await;
    assert_eq!(due.len(), 1, "{due:?}");
    assert_eq!((due[0].period, due[0].spent_usd), (PeriodKind::Day, 2.0));
    assert!(budget.warnings_due().await.is_empty(), "warned once");
    assert!(budget.over().await.is_none());
    f.spend_a_dollar().await;
    let (_, over) = budget.over().await.expect("over the daily limit");
    assert_eq!(
        (over.period, over.spent_usd, over.limit_usd),
        (PeriodKind::Day, 3.0, 2.4)
    );
    // A restart builds a new service over the same store: still over, no warning again.
    let restarted = f.budget();
    assert!(restarted.over().await.is_some());
    assert!(restarted.warnings_due().await.is_empty());
}

#[tokio::test]
async fn continue_today_lifts_the_limit_for_today_only_and_the_next_day_is_fresh() {
    let f = Fixture::new(BUDGET).await;
    let budget = f.budget();
    for _ in 0..3 {
        f.spend_a_dollar().await;
    }
    let (standing, _) = budget.over().await.expect("over");
    let today = standing.periods.key(PeriodKind::Day);
    // A forged or stale key changes nothing.
    assert!(!budget.grant("day:1999-01-01").await.unwrap());
    assert!(!budget.grant("month:1999-01").await.unwrap());
    assert!(!budget.grant("anything").await.unwrap());
    assert!(budget.over().await.is_some());
    assert!(budget.grant(&today).await.unwrap());
    let standing = budget.standing().await.unwrap();
    assert!(standing.day_override && standing.over().is_none());
    // The next day: a fresh daily budget, the old override is stale.
    f.shift(Duration::days(1));
    let standing = budget.standing().await.unwrap();
    assert!(!standing.day_override);
    assert_eq!(standing.today.total, 0.0);
    assert!(standing.over().is_none());
    assert!(
        !budget.grant(&today).await.unwrap(),
        "yesterday's press is stale"
    );
}

#[tokio::test]
async fn a_clock_jumping_back_never_resets_the_day() {
    let f = Fixture::new(BUDGET).await;
    let budget = f.budget();
    for _ in 0..3 {
        f.spend_a_dollar().await;
    }
    assert!(budget.over().await.is_some());
    f.shift(-Duration::days(2));
    let (standing, over) = budget.over().await.expect("still over");
    assert_eq!(over.spent_usd, 3.0);
    assert!(standing.periods.day_start <= Utc::now());
    // Even a fresh service (a restart with the clock back) sees the ledger's newest row.
    assert!(f.budget().over().await.is_some());
}

#[tokio::test]
async fn per_provider_limits_count_that_provider_only_and_no_budget_stops_nothing() {
    let f = Fixture::new(
        r#"
[providers.main.prices.m1]
input = 1.0
output = 0.0

[budget.providers.spare]
daily = 0.5
"#,
    )
    .await;
    let budget = f.budget();
    for _ in 0..3 {
        f.spend_a_dollar().await;
    }
    assert!(budget.over().await.is_none(), "main's spend is not spare's");
    let standing = budget.standing().await.unwrap();
    assert_eq!(standing.limits.len(), 1);
    assert_eq!(standing.limits[0].provider.as_deref(), Some("spare"));
    assert_eq!(standing.today.by_provider["main"], 3.0);

    let none = Fixture::new("").await;
    let budget = none.budget();
    none.spend_a_dollar().await;
    assert!(!budget.enabled());
    assert!(budget.over().await.is_none());
    assert!(budget.warnings_due().await.is_empty());
}

#[test]
fn texts_in_both_languages() {
    use kernel_common::config::Locale;
    let l = LimitState {
        period: PeriodKind::Day,
        provider: None,
        spent_usd: 2.0,
        limit_usd: 2.4,
    };
    let zh = texts::warning(Locale::Zh, &l);
    assert!(
        zh.contains("今日预算") && zh.contains("$2.00") && zh.contains("83%"),
        "{zh}"
    );
    let en = texts::warning(Locale::En, &l);
    assert!(en.starts_with("💰 The daily budget is 83% used"), "{en}");
    assert!(texts::task_skipped(Locale::Zh, "日报", &l).contains("日报"));
    assert!(texts::refusal_message(&l).contains("$2.00 spent of $2.40"));
}

#[tokio::test]
async fn two_parallel_turns_crossing_the_limit_at_once_warn_once_and_both_see_it() {
    let f = Fixture::new(BUDGET).await;
    let budget = f.budget();
    f.spend_a_dollar().await;
    // Two turns of different sessions each spend a dollar at the same moment: $3 > $2.40.
    tokio::join!(f.spend_a_dollar(), f.spend_a_dollar());
    let (one, two) = tokio::join!(budget.warnings_due(), budget.warnings_due());
    let daily: usize = [&one, &two]
        .iter()
        .map(|due| due.iter().filter(|l| l.limit_usd == 2.4).count())
        .sum();
    assert_eq!(
        daily, 1,
        "exactly one warning for the daily limit: {one:?} {two:?}"
    );
    // Both turns' checks see the limit: no further turn starts.
    let (a, b) = tokio::join!(budget.over(), budget.over());
    assert!(a.is_some() && b.is_some());
}
