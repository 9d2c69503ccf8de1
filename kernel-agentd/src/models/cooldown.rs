//! Provider cooldowns: after `n` consecutive failed calls (rate limit, overload, auth/billing,
//! network) a provider is skipped for `min(1h, 5 min × 5^(n−1))`; persisted in `settings`
//! (`cooldown:<name>` = `<n> <until, Unix ms>`), reset by a success.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, SubsecRound as _, Utc};
use kernel_proto::words;

use crate::llm::LlmError;
use crate::store::Store;

/// The first cooldown.
pub(crate) const BASE: Duration = Duration::from_secs(5 * 60);
/// The longest cooldown.
pub(crate) const MAX: Duration = Duration::from_secs(60 * 60);
/// The cooldown key of the `[titles]` provider (not a `[providers.*]` name: brackets).
pub(crate) const TITLES: &str = "[titles]";

const SETTING_PREFIX: &str = "cooldown:";

/// How long a provider cools down after `failures` consecutive failures:
/// `min(1h, 5 min × 5^(failures−1))` (zero for none).
pub(crate) fn cooldown_for(failures: u32) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let factor = 5u32.saturating_pow(failures - 1);
    BASE.checked_mul(factor).map_or(MAX, |d| d.min(MAX))
}

/// Why a model call moved on to another provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailoverReason {
    /// 429.
    RateLimited,
    /// 5xx, Anthropic 529.
    Overloaded,
    /// 401/402/403: the key is wrong, lacks permission, or the account cannot pay.
    Auth,
    /// Connect refused, DNS, reset.
    Network,
    /// The selected provider is cooling down after earlier failures.
    Cooldown,
}

impl FailoverReason {
    /// The reason a failed call is worth retrying on another provider; `None` for errors that
    /// would fail there too (bad request, context too long) or mid-stream breakage.
    pub fn of(error: &LlmError) -> Option<FailoverReason> {
        match error {
            LlmError::RateLimited { .. } => Some(Self::RateLimited),
            LlmError::Overloaded { .. } => Some(Self::Overloaded),
            LlmError::Authentication { .. } => Some(Self::Auth),
            LlmError::Network { .. } => Some(Self::Network),
            _ => None,
        }
    }

    /// The word sent to clients (`kernel.v1.FailedOver.reason`).
    pub fn word(self) -> words::FailoverReason {
        match self {
            Self::RateLimited => words::FailoverReason::RateLimited,
            Self::Overloaded => words::FailoverReason::Overloaded,
            Self::Auth => words::FailoverReason::Auth,
            Self::Network => words::FailoverReason::Network,
            Self::Cooldown => words::FailoverReason::Cooldown,
        }
    }

    /// The word's wire value (`rate_limited`, `overloaded`, `auth`, `network`, `cooldown`).
    pub fn code(self) -> &'static str {
        self.word().as_str()
    }
}

/// A provider's failure streak and the end of its cooldown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cooldown {
    /// Consecutive failures.
    pub failures: u32,
    pub until: DateTime<Utc>,
}

impl Cooldown {
    fn encode(self) -> String {
        format!("{} {}", self.failures, self.until.timestamp_millis())
    }

    fn decode(value: &str) -> Option<Cooldown> {
        let (failures, until) = value.split_once(' ')?;
        Some(Cooldown {
            failures: failures.parse().ok()?,
            until: DateTime::from_timestamp_millis(until.parse().ok()?)?,
        })
    }
}

/// Wall-clock time that advances with tokio's clock (so paused-time tests can move it): the
/// wall time at an anchor instant plus the tokio time elapsed since.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall: DateTime<Utc>,
    at: tokio::time::Instant,
}

impl Clock {
    /// Anchored at the system time now.
    pub fn system() -> Clock {
        Clock::anchored(Utc::now())
    }

    /// `wall` is the time now.
    pub fn anchored(wall: DateTime<Utc>) -> Clock {
        Clock {
            wall,
            at: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        let elapsed =
            chrono::Duration::from_std(self.at.elapsed()).unwrap_or(chrono::Duration::MAX);
        self.wall + elapsed
    }
}

/// The cooldowns of every provider (and of `[titles]`), persisted in `store`.
#[derive(Debug)]
pub struct Cooldowns {
    store: Store,
    clock: Clock,
    /// By name; only providers with a failure streak.
    state: Mutex<BTreeMap<String, Cooldown>>,
}

impl Cooldowns {
    /// Loads the saved streaks of `names` from `store`.
    pub async fn load<'a>(
        store: Store,
        clock: Clock,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Cooldowns {
        // Owned before the awaits (a borrowing iterator held across them is not `Send` enough
        // for a spawned server).
        let names: Vec<String> = names.into_iter().map(str::to_owned).collect();
        let mut state = BTreeMap::new();
        for name in &names {
            match store.get_setting(&setting_key(name)).await {
                Ok(Some(value)) => {
                    if let Some(cooldown) = Cooldown::decode(&value) {
                        state.insert(name.clone(), cooldown);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(provider = %name, error = %e, "cannot read a saved cooldown");
                }
            }
        }
        Cooldowns {
            store,
            clock,
            state: Mutex::new(state),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Cooldown>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cooldown of `name` if it has not ended yet.
    pub fn active(&self, name: &str) -> Option<Cooldown> {
        let now = self.clock.now();
        self.lock().get(name).copied().filter(|c| c.until > now)
    }

    /// Whether `name` is cooling down now.
    pub fn is_cooling(&self, name: &str) -> bool {
        self.active(name).is_some()
    }

    /// Every cooldown that has not ended yet, by name.
    pub fn all_active(&self) -> Vec<(String, Cooldown)> {
        let now = self.clock.now();
        self.lock()
            .iter()
            .filter(|(_, c)| c.until > now)
            .map(|(n, c)| (n.clone(), *c))
            .collect()
    }

    /// Records a failure of `name`: one more in its streak, cooling down from now.
    pub async fn failed(&self, name: &str) -> Cooldown {
        let cooldown = {
            let mut state = self.lock();
            let failures = state.get(name).map_or(0, |c| c.failures).saturating_add(1);
            let wait =
                chrono::Duration::from_std(cooldown_for(failures)).unwrap_or(chrono::Duration::MAX);
            let cooldown = Cooldown {
                failures,
                // Whole milliseconds, as persisted.
                until: (self.clock.now() + wait).trunc_subsecs(3),
            };
            state.insert(name.to_owned(), cooldown);
            cooldown
        };
        tracing::warn!(provider = %name, failures = cooldown.failures, until = %cooldown.until.to_rfc3339(), "provider cooling down");
        self.save(name, &cooldown.encode()).await;
        cooldown
    }

    /// Records a success of `name`: its streak ends.
    pub async fn succeeded(&self, name: &str) {
        if self.lock().remove(name).is_none() {
            return;
        }
        tracing::info!(provider = %name, "provider recovered; cooldown reset");
        self.save(name, "").await;
    }

    /// Ends `name`'s cooldown because the owner chose it (`/provider`): the owner's explicit
    /// choice wins over the cooldown.
    pub async fn end_by_owner(&self, name: &str) {
        if self.lock().remove(name).is_none() {
            return;
        }
        tracing::info!(provider = %name, "the owner chose a cooling provider; cooldown ended");
        self.save(name, "").await;
    }

    async fn save(&self, name: &str, value: &str) {
        if let Err(e) = self.store.set_setting(&setting_key(name), value).await {
            tracing::warn!(provider = %name, error = %e, "cannot save a cooldown");
        }
    }
}

fn setting_key(name: &str) -> String {
    format!("{SETTING_PREFIX}{name}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_support::env;

    const MIN: u64 = 60;

    #[test]
    fn the_schedule_is_five_minutes_times_five_to_the_streak_capped_at_an_hour() {
        let secs: Vec<u64> = (0..=6).map(|n| cooldown_for(n).as_secs()).collect();
        assert_eq!(
            secs,
            vec![0, 5 * MIN, 25 * MIN, 60 * MIN, 60 * MIN, 60 * MIN, 60 * MIN]
        );
        assert_eq!(cooldown_for(u32::MAX), MAX);
    }

    #[test]
    fn only_provider_failures_fail_over() {
        let m = || "x".to_owned();
        let cases = [
            (
                LlmError::RateLimited {
                    retry_after: None,
                    message: m(),
                },
                Some(FailoverReason::RateLimited),
            ),
            (
                LlmError::Overloaded {
                    status: 529,
                    message: m(),
                },
                Some(FailoverReason::Overloaded),
            ),
            (
                LlmError::Authentication {
                    status: 402,
                    message: m(),
                },
                Some(FailoverReason::Auth),
            ),
            (
                LlmError::Network { message: m() },
                Some(FailoverReason::Network),
            ),
            (
                LlmError::BadRequest {
                    status: 400,
                    message: m(),
                },
                None,
            ),
            (LlmError::ContextTooLong { message: m() }, None),
            (LlmError::CapabilityMissing { message: m() }, None),
            (LlmError::Stream { message: m() }, None),
            (
                LlmError::Stalled {
                    after: Duration::from_secs(1),
                },
                None,
            ),
        ];
        for (error, reason) in cases {
            assert_eq!(FailoverReason::of(&error), reason, "{error}");
        }
    }

    /// Runs `f` (database work, which paused time would time out) with the clock running, then
    /// pauses it again.
    pub(crate) async fn unpaused<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::time::resume();
        let out = f.await;
        tokio::time::pause();
        out
    }

    /// `a` is `b` give or take the real time database work took.
    #[track_caller]
    pub(crate) fn assert_near(a: DateTime<Utc>, b: DateTime<Utc>) {
        let off = (a - b).num_milliseconds().abs();
        assert!(off < 2_000, "{a} is not {b}");
    }

    #[tokio::test]
    async fn a_streak_grows_the_cooldown_resets_on_success_and_survives_a_reload() {
        let env = env("").await;
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let minutes = chrono::Duration::minutes;
        tokio::time::pause();
        let cooldowns = unpaused(Cooldowns::load(
            env.store.clone(),
            Clock::anchored(t0),
            ["main"],
        ))
        .await;
        assert!(!cooldowns.is_cooling("main"));
        let first = unpaused(cooldowns.failed("main")).await;
        assert_eq!(first.failures, 1);
        assert_near(first.until, t0 + minutes(5));
        tokio::time::advance(Duration::from_secs(5 * MIN - 5)).await;
        assert!(cooldowns.is_cooling("main"));
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(!cooldowns.is_cooling("main"), "over after 5 min");
        let second = unpaused(cooldowns.failed("main")).await;
        assert_eq!(
            second.failures, 2,
            "the streak goes on after a cooldown ends"
        );
        assert_near(second.until, t0 + minutes(5 + 25));
        assert_eq!(cooldowns.all_active(), vec![("main".to_owned(), second)]);
        tokio::time::advance(Duration::from_secs(25 * MIN)).await;
        let third = unpaused(cooldowns.failed("main")).await;
        assert_near(third.until, t0 + minutes(30 + 60));
        tokio::time::advance(Duration::from_secs(60 * MIN)).await;
        let fourth = unpaused(cooldowns.failed("main")).await;
        assert_eq!(fourth.failures, 4);
        assert_near(fourth.until, t0 + minutes(90 + 60));

        let reloaded = unpaused(Cooldowns::load(
            env.store.clone(),
            Clock::anchored(t0 + minutes(91)),
            ["main"],
        ))
        .await;
        assert_eq!(reloaded.active("main"), Some(fourth), "persisted");
        tokio::time::advance(Duration::from_secs(59 * MIN - 5)).await;
        assert!(reloaded.is_cooling("main"));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(!reloaded.is_cooling("main"));
        unpaused(reloaded.succeeded("main")).await;
        let again = unpaused(Cooldowns::load(
            env.store.clone(),
            Clock::anchored(t0),
            ["main"],
        ))
        .await;
        assert_eq!(again.active("main"), None, "the reset is persisted");
        assert_eq!(
            unpaused(again.failed("main")).await.failures,
            1,
            "a new streak"
        );
    }
}
