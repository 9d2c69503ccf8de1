//! `RetryConfig`: how a model call is retried on the same provider after a transient failure
//! (`[providers.<name>.retry]`, `[titles.retry]`), before it fails over or fails.

use std::time::Duration;

/// `max_retries` when not set: like the official Anthropic and OpenAI SDKs, plus one.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// `base_delay_ms` when not set: the first wait (then doubled each retry).
pub const DEFAULT_BASE_DELAY_MS: u64 = 1_000;
/// `max_wait_secs` when not set: the most all waits of one call may add up to.
pub const DEFAULT_MAX_WAIT_SECS: u64 = 30;

/// The retry policy of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// The first wait; retry n waits about `base_delay × 2^(n−1)`, with jitter.
    pub base_delay: Duration,
    /// The most the waits of one call may add up to; a `retry-after` asking for more ends the
    /// retries.
    pub max_wait: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_retries: DEFAULT_MAX_RETRIES,
            base_delay: Duration::from_millis(DEFAULT_BASE_DELAY_MS),
            max_wait: Duration::from_secs(DEFAULT_MAX_WAIT_SECS),
        }
    }
}
