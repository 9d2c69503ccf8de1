//! Retrying a model call on the same provider, the one policy every model call follows (turns,
//! titles, auto memory, summaries): which failures are transient (429, 500/502/503/504/529, a
//! refused or reset connection, a stream cut or stalled), how long to wait (a 429's
//! `retry-after`, else exponential backoff with jitter: about 1 s, 2 s, 4 s), and when to give
//! up (`max_retries`, or the waits would exceed `max_wait`). Callers retry only failures before
//! any answer text streamed; then they fail over or fail. A wait ends at once on cancellation.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel_common::config::retry::RetryConfig;
use kernel_proto::words;
use tokio_util::sync::CancellationToken;

use super::LlmError;

/// Jitter: each backoff is scaled by a factor in `[1 − JITTER, 1 + JITTER]`.
const JITTER: f64 = 0.2;

/// Why a failed call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryReason {
    /// 429.
    RateLimited,
    /// 500/502/503/504/529 or an overload reported inside the stream.
    Overloaded,
    /// The connection was refused or reset.
    Network,
    /// No bytes within the first-byte or between-bytes timeout.
    Stalled,
    /// The stream broke off or ended early.
    StreamCut,
}

impl RetryReason {
    /// The reason for retrying after `error`, or `None` when retrying cannot help (a bad
    /// request, a refused key, a context too long, a missing capability, another 5xx).
    pub fn of(error: &LlmError) -> Option<Self> {
        Some(match error {
            LlmError::RateLimited { .. } => Self::RateLimited,
            LlmError::Overloaded {
                status: 0 | 500 | 502 | 503 | 504 | 529,
                ..
            } => Self::Overloaded,
            LlmError::Network { .. } => Self::Network,
            LlmError::Stalled { .. } => Self::Stalled,
            LlmError::Stream { .. } => Self::StreamCut,
            _ => return None,
        })
    }

    /// The word sent to clients (`kernel.v1.RetryScheduled.reason`).
    pub fn word(self) -> words::RetryReason {
        match self {
            Self::RateLimited => words::RetryReason::RateLimited,
            Self::Overloaded => words::RetryReason::Overloaded,
            Self::Network => words::RetryReason::Network,
            Self::Stalled => words::RetryReason::Stalled,
            Self::StreamCut => words::RetryReason::StreamCut,
        }
    }

    /// The word's wire value, e.g. `rate_limited`.
    pub fn code(self) -> &'static str {
        self.word().as_str()
    }
}

/// A retry about to happen: why, which one of how many, and after how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    pub reason: RetryReason,
    /// 1 for the first retry.
    pub attempt: u32,
    /// The most retries this call may make.
    pub max_attempts: u32,
    pub wait: Duration,
}

/// The retry state of one call (all its attempts).
#[derive(Debug, Clone)]
pub struct Retry {
    config: RetryConfig,
    /// Retries scheduled so far.
    done: u32,
    /// Waits scheduled so far, summed.
    waited: Duration,
}

impl Retry {
    pub fn new(config: RetryConfig) -> Self {
        Self {
            config,
            done: 0,
            waited: Duration::ZERO,
        }
    }

    /// After an attempt failed with `error` (before any answer text): the retry to make, or
    /// `None` to give up (not transient, no retries left, or the wait would exceed the budget;
    /// a `retry-after` longer than what is left gives up at once, the error says the wait).
    pub fn after(&mut self, error: &LlmError) -> Option<Scheduled> {
        let reason = RetryReason::of(error)?;
        if self.done >= self.config.max_retries {
            return None;
        }
        let left = self.config.max_wait.saturating_sub(self.waited);
        let wait = match error {
            LlmError::RateLimited {
                retry_after: Some(after),
                ..
            } => {
                if *after > left {
                    return None;
                }
                *after
            }
            _ => self.backoff().min(left),
        };
        if wait.is_zero() && left.is_zero() {
            return None;
        }
        self.done += 1;
        self.waited += wait;
        Some(Scheduled {
            reason,
            attempt: self.done,
            max_attempts: self.config.max_retries,
            wait,
        })
    }

    /// `base_delay × 2^done`, jittered.
    fn backoff(&self) -> Duration {
        let exp = self
            .config
            .base_delay
            .saturating_mul(1 << self.done.min(16));
        exp.mul_f64(1.0 + JITTER * (2.0 * unit_random() - 1.0))
    }
}

/// A number in `[0, 1)`, different each call (not cryptographic).
fn unit_random() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed));
    (n >> 11) as f64 / (1u64 << 53) as f64
}

/// Waits `wait` unless `cancel` fires first; `false` when cancelled.
pub async fn sleep(wait: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        biased;
        () = cancel.cancelled() => false,
        () = tokio::time::sleep(wait) => true,
    }
}

/// Runs `call` until it succeeds, fails for good, or `cancel` fires (a cancelled wait returns
/// the last error), retrying on the `config` policy; `what` names the endpoint in the logs. For
/// non-streaming calls (titles, auto memory, summaries), where no text can have been shown.
pub async fn run<T, F, Fut>(
    config: RetryConfig,
    what: &str,
    cancel: &CancellationToken,
    mut call: F,
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let mut retry = Retry::new(config);
    loop {
        let error = match call().await {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        let Some(next) = retry.after(&error) else {
            return Err(error);
        };
        log(what, &next, &error);
        if !sleep(next.wait, cancel).await {
            return Err(error);
        }
    }
}

/// Logs a scheduled retry with structured fields.
pub fn log(provider: &str, next: &Scheduled, error: &LlmError) {
    tracing::warn!(
        provider,
        reason = next.reason.code(),
        attempt = next.attempt,
        max_attempts = next.max_attempts,
        wait_ms = u64::try_from(next.wait.as_millis()).unwrap_or(u64::MAX),
        error = %error,
        "model call failed; retrying on the same provider"
    );
}

/// The last retry, for `/status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastRetry {
    pub at: DateTime<Utc>,
    pub provider: String,
    pub reason: RetryReason,
}

/// Retries of turn model calls since the start, for `/status`.
#[derive(Debug, Default)]
pub struct RetryStats {
    count: AtomicU64,
    last: Mutex<Option<LastRetry>>,
}

impl RetryStats {
    /// Counts a retry of `provider`'s call.
    pub fn record(&self, provider: &str, reason: RetryReason) {
        self.count.fetch_add(1, Ordering::Relaxed);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(LastRetry {
            at: Utc::now(),
            provider: provider.to_owned(),
            reason,
        });
    }

    /// Retries so far and the last one.
    pub fn snapshot(&self) -> (u64, Option<LastRetry>) {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner()).clone();
        (self.count.load(Ordering::Relaxed), last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    fn overloaded() -> LlmError {
        LlmError::Overloaded {
            status: 529,
            message: "overloaded".into(),
        }
    }

    fn limited(after: Option<Duration>) -> LlmError {
        LlmError::RateLimited {
            retry_after: after,
            message: "slow down".into(),
        }
    }

    #[test]
    fn transient_errors_are_retried_and_the_rest_are_not() {
        for (e, code) in [
            (limited(None), "rate_limited"),
            (overloaded(), "overloaded"),
            (
                LlmError::Overloaded {
                    status: 503,
                    message: String::new(),
                },
                "overloaded",
            ),
            (
                LlmError::Network {
                    message: "connection refused".into(),
                },
                "network",
            ),
            (
                LlmError::Stalled {
                    after: Duration::from_secs(5),
                },
                "stalled",
            ),
            (
                LlmError::Stream {
                    message: "cut".into(),
                },
                "stream_cut",
            ),
        ] {
            assert_eq!(RetryReason::of(&e).map(RetryReason::code), Some(code));
        }
        for e in [
            LlmError::Overloaded {
                status: 501,
                message: String::new(),
            },
            LlmError::Authentication {
                status: 401,
                message: String::new(),
            },
            LlmError::BadRequest {
                status: 400,
                message: String::new(),
            },
            LlmError::ContextTooLong {
                message: String::new(),
            },
            LlmError::CapabilityMissing {
                message: String::new(),
            },
        ] {
            assert_eq!(Retry::new(RetryConfig::default()).after(&e), None, "{e}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stops_after_max_retries() {
        for _ in 0..50 {
            let mut retry = Retry::new(RetryConfig::default());
            let waits: Vec<Duration> = (0..4)
                .filter_map(|_| retry.after(&overloaded()))
                .map(|s| s.wait)
                .collect();
            assert_eq!(waits.len(), 3, "three retries by default");
            for (wait, nominal) in waits.iter().zip([1.0, 2.0, 4.0]) {
                let secs = wait.as_secs_f64();
                assert!(
                    secs >= nominal * 0.8 - 1e-9 && secs <= nominal * 1.2 + 1e-9,
                    "{secs} vs {nominal}"
                );
            }
        }
        let mut retry = Retry::new(RetryConfig::default());
        let first = retry.after(&overloaded()).unwrap();
        assert_eq!((first.attempt, first.max_attempts), (1, 3));
        let none = RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        };
        assert_eq!(Retry::new(none).after(&overloaded()), None);
    }

    #[test]
    fn waits_never_exceed_the_budget() {
        let config = RetryConfig {
            max_retries: 10,
            base_delay: Duration::from_secs(4),
            max_wait: Duration::from_secs(10),
        };
        let mut retry = Retry::new(config);
        let mut total = Duration::ZERO;
        while let Some(s) = retry.after(&overloaded()) {
            total += s.wait;
        }
        assert!(total <= Duration::from_secs(10), "{total:?}");
    }

    #[test]
    fn retry_after_is_honoured_and_one_beyond_the_budget_gives_up() {
        let mut retry = Retry::new(RetryConfig::default());
        let s = retry.after(&limited(Some(Duration::from_secs(2)))).unwrap();
        assert_eq!(s.wait, Duration::from_secs(2));
        assert_eq!(s.reason, RetryReason::RateLimited);
        // Days long (what the header parser caps at) or beyond what is left: give up at once.
        for after in [Duration::from_secs(86_400), Duration::from_secs(29)] {
            assert_eq!(retry.after(&limited(Some(after))), None, "{after:?}");
        }
        // Missing (also garbage or negative, which parse to none): the backoff.
        let s = retry.after(&limited(None)).unwrap();
        assert!(s.wait >= Duration::from_millis(1600), "{:?}", s.wait);
        // A zero wait is fine.
        let s = retry.after(&limited(Some(Duration::ZERO))).unwrap();
        assert_eq!(s.wait, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn run_retries_until_success_and_waits_in_paused_time() {
        let calls = AtomicU32::new(0);
        let start = tokio::time::Instant::now();
        let out = run(
            RetryConfig::default(),
            "t",
            &CancellationToken::new(),
            || {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move { if n < 2 { Err(overloaded()) } else { Ok(n) } }
            },
        )
        .await;
        assert_eq!(out, Ok(2));
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(2400) && waited <= Duration::from_millis(3600),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn run_gives_up_with_the_last_error_and_a_cancelled_wait_ends_at_once() {
        let out: Result<(), _> = run(
            RetryConfig::default(),
            "t",
            &CancellationToken::new(),
            || async { Err(overloaded()) },
        )
        .await;
        assert_eq!(out, Err(overloaded()));

        let cancel = CancellationToken::new();
        cancel.cancel();
        let start = tokio::time::Instant::now();
        let out: Result<(), _> = run(RetryConfig::default(), "t", &cancel, || async {
            Err(overloaded())
        })
        .await;
        assert_eq!(out, Err(overloaded()));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[test]
    fn stats_count_and_remember_the_last_retry() {
        let stats = RetryStats::default();
        assert_eq!(stats.snapshot(), (0, None));
        stats.record("a", RetryReason::Stalled);
        stats.record("b", RetryReason::Overloaded);
        let (count, last) = stats.snapshot();
        assert_eq!(count, 2);
        let last = last.unwrap();
        assert_eq!(
            (last.provider.as_str(), last.reason),
            ("b", RetryReason::Overloaded)
        );
    }
}
