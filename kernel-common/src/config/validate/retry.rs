//! `[providers.<name>.retry]` and `[titles.retry]`: the retry policy, each value within range.

use std::time::Duration;

use super::Ctx;
use crate::config::raw::RawRetry;
use crate::config::retry::{
    DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_WAIT_SECS, RetryConfig,
};

/// Most retries accepted.
const MAX_RETRIES: u32 = 10;
/// `base_delay_ms` range.
const BASE_DELAY_MS: std::ops::RangeInclusive<u64> = 10..=60_000;
/// `max_wait_secs` range.
const MAX_WAIT_SECS: std::ops::RangeInclusive<u64> = 1..=600;

/// The retry policy under `key` (e.g. `providers.anthropic`); out-of-range values are refused
/// and replaced by the default.
pub(super) fn retry(ctx: &mut Ctx<'_>, key: &str, raw: Option<&RawRetry>) -> RetryConfig {
    let raw = raw.cloned().unwrap_or_default();
    let mut max_retries = raw.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
    if max_retries > MAX_RETRIES {
        ctx.refuse(format!(
            "{key}.retry.max_retries = {max_retries} is too many: use 0 (never retry) to \
             {MAX_RETRIES} (default {DEFAULT_MAX_RETRIES})"
        ));
        max_retries = DEFAULT_MAX_RETRIES;
    }
    let mut base = raw.base_delay_ms.unwrap_or(DEFAULT_BASE_DELAY_MS);
    if !BASE_DELAY_MS.contains(&base) {
        ctx.refuse(format!(
            "{key}.retry.base_delay_ms = {base} is out of range: use {} to {} milliseconds \
             (default {DEFAULT_BASE_DELAY_MS})",
            BASE_DELAY_MS.start(),
            BASE_DELAY_MS.end()
        ));
        base = DEFAULT_BASE_DELAY_MS;
    }
    let mut wait = raw.max_wait_secs.unwrap_or(DEFAULT_MAX_WAIT_SECS);
    if !MAX_WAIT_SECS.contains(&wait) {
        ctx.refuse(format!(
            "{key}.retry.max_wait_secs = {wait} is out of range: use {} to {} seconds \
             (default {DEFAULT_MAX_WAIT_SECS})",
            MAX_WAIT_SECS.start(),
            MAX_WAIT_SECS.end()
        ));
        wait = DEFAULT_MAX_WAIT_SECS;
    }
    RetryConfig {
        max_retries,
        base_delay: Duration::from_millis(base),
        max_wait: Duration::from_secs(wait),
    }
}
