//! `[memory.consolidation]`: the background job that tidies automatic memories after auto memory
//! ran (at most every `interval_hours`): its endpoint (auto memory's by default), whether it
//! runs, and its limits.

use std::collections::BTreeMap;
use std::time::Duration;

use super::Ctx;
use crate::config::raw::RawConsolidation;
use crate::config::{
    Component, ConsolidationConfig, MemoryAutoConfig, ProviderConfig, TitlesConfig,
};

/// `max_tokens` when not set: room for a plan over a few hundred memories.
const DEFAULT_MAX_TOKENS: u32 = 4096;
/// `timeout_secs` when not set.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);
/// `interval_hours` when not set: at most daily.
const DEFAULT_INTERVAL_HOURS: u32 = 24;
/// The largest `interval_hours` accepted (30 days).
const MAX_INTERVAL_HOURS: u32 = 720;
/// `max_candidates` when not set.
const DEFAULT_MAX_CANDIDATES: usize = 300;
/// The range of `max_candidates`.
const CANDIDATES: std::ops::RangeInclusive<u32> = 10..=2000;

/// The validated `[memory.consolidation]` (missing: on when auto memory runs).
pub(super) fn consolidation(
    ctx: &mut Ctx<'_>,
    raw: Option<&RawConsolidation>,
    auto: &MemoryAutoConfig,
    titles: Option<&TitlesConfig>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> ConsolidationConfig {
    let default = RawConsolidation::default();
    let raw = raw.unwrap_or(&default);
    let max_tokens = match raw.max_tokens {
        None => DEFAULT_MAX_TOKENS,
        Some(0) => {
            ctx.refuse(
                "memory.consolidation.max_tokens must be at least 1: set e.g. max_tokens = 4096",
            );
            DEFAULT_MAX_TOKENS
        }
        Some(n) => n,
    };
    let endpoint = if raw.provider.is_some() || raw.model.is_some() {
        super::cheap_model::endpoint(
            ctx,
            "memory.consolidation",
            (raw.provider.as_deref(), raw.model.as_deref()),
            max_tokens,
            titles,
            providers,
        )
    } else {
        auto.endpoint
            .clone()
            .map(|e| TitlesConfig { max_tokens, ..e })
    };
    let usable = auto.enabled && endpoint.as_ref().is_some_and(|e| e.api_key.is_some());
    let enabled = match raw.enabled {
        None => usable,
        Some(false) => false,
        Some(true) => {
            if !usable {
                ctx.refuse_for(
                    Component::Agentd,
                    "memory.consolidation.enabled = true but it cannot run: it runs after auto \
                     memory, so enable [memory_auto], and give it a provider with an api_key",
                );
            }
            usable
        }
    };
    let interval_hours = match raw.interval_hours {
        None => DEFAULT_INTERVAL_HOURS,
        Some(n @ 0..=MAX_INTERVAL_HOURS) => n,
        Some(n) => {
            ctx.refuse(format!(
                "memory.consolidation.interval_hours = {n} must be between 0 (after every auto \
                 memory run) and {MAX_INTERVAL_HOURS} (default {DEFAULT_INTERVAL_HOURS})"
            ));
            DEFAULT_INTERVAL_HOURS
        }
    };
    let max_candidates = match raw.max_candidates {
        None => DEFAULT_MAX_CANDIDATES,
        Some(n) if CANDIDATES.contains(&n) => n as usize,
        Some(n) => {
            ctx.refuse(format!(
                "memory.consolidation.max_candidates = {n} must be between {} and {} (default \
                 {DEFAULT_MAX_CANDIDATES})",
                CANDIDATES.start(),
                CANDIDATES.end()
            ));
            DEFAULT_MAX_CANDIDATES
        }
    };
    let timeout = raw.timeout_secs.map_or(DEFAULT_TIMEOUT, |secs| {
        ctx.timeout_secs("memory.consolidation.timeout_secs", secs, DEFAULT_TIMEOUT)
    });
    ConsolidationConfig {
        enabled,
        endpoint,
        interval: Duration::from_secs(u64::from(interval_hours) * 3600),
        max_candidates,
        timeout,
    }
}
