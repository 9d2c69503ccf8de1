//! `[memory_auto]`: which endpoint the background memory job calls (the `[titles]` one by
//! default, or a configured provider), whether it runs, and its limits.

use std::collections::BTreeMap;
use std::time::Duration;

use super::Ctx;
use crate::config::raw::RawMemoryAuto;
use crate::config::{
    Component, DEFAULT_MEMORY_AUTO_INTERVAL, DEFAULT_MEMORY_AUTO_MAX,
    DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE, MemoryAutoConfig, ProviderConfig, TitlesConfig,
};

/// `memory_auto.max_tokens` when not set: room for a day's JSON.
const DEFAULT_MAX_TOKENS: u32 = 2048;
/// `memory_auto.timeout_secs` when not set.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest `interval` accepted.
const MAX_INTERVAL: u32 = 1000;
/// The largest `max_auto` accepted.
const MAX_MAX_AUTO: u32 = 100_000;

/// The validated `[memory_auto]` (off with a problem when malformed; missing: on when the
/// `[titles]` endpoint is usable).
pub(super) fn memory_auto(
    ctx: &mut Ctx<'_>,
    raw: Option<&RawMemoryAuto>,
    titles: Option<&TitlesConfig>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> MemoryAutoConfig {
    let default = RawMemoryAuto::default();
    let raw = raw.unwrap_or(&default);
    let max_tokens = match raw.max_tokens {
        None => DEFAULT_MAX_TOKENS,
        Some(0) => {
            ctx.refuse("memory_auto.max_tokens must be at least 1: set e.g. max_tokens = 2048");
            DEFAULT_MAX_TOKENS
        }
        Some(n) => n,
    };
    let endpoint = super::cheap_model::endpoint(
        ctx,
        "memory_auto",
        (raw.provider.as_deref(), raw.model.as_deref()),
        max_tokens,
        titles,
        providers,
    );
    let usable = endpoint.as_ref().is_some_and(|e| e.api_key.is_some());
    let enabled = match raw.enabled {
        None => usable,
        Some(false) => false,
        Some(true) => {
            if !usable {
                ctx.refuse_for(
                    Component::Agentd,
                    "memory_auto.enabled = true but it has no usable provider: configure \
                     [titles] with an api_key, or set memory_auto.provider to a provider with a \
                     key",
                );
            }
            usable
        }
    };
    let interval = match raw.interval {
        None => DEFAULT_MEMORY_AUTO_INTERVAL,
        Some(n @ 1..=MAX_INTERVAL) => n as usize,
        Some(_) => {
            ctx.refuse(format!(
                "memory_auto.interval must be between 1 and {MAX_INTERVAL} user messages \
                 (default {DEFAULT_MEMORY_AUTO_INTERVAL})"
            ));
            DEFAULT_MEMORY_AUTO_INTERVAL
        }
    };
    let min_importance = match raw.min_importance {
        None => DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE,
        Some(n @ 1..=5) => n as u8,
        Some(_) => {
            ctx.refuse(format!(
                "memory_auto.min_importance must be between 1 and 5 (default \
                 {DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE})"
            ));
            DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE
        }
    };
    let max_auto = match raw.max_auto {
        None => DEFAULT_MEMORY_AUTO_MAX,
        Some(n @ 1..=MAX_MAX_AUTO) => n as usize,
        Some(_) => {
            ctx.refuse(format!(
                "memory_auto.max_auto must be between 1 and {MAX_MAX_AUTO} (default \
                 {DEFAULT_MEMORY_AUTO_MAX})"
            ));
            DEFAULT_MEMORY_AUTO_MAX
        }
    };
    let timeout = raw.timeout_secs.map_or(DEFAULT_TIMEOUT, |secs| {
        ctx.timeout_secs("memory_auto.timeout_secs", secs, DEFAULT_TIMEOUT)
    });
    MemoryAutoConfig {
        enabled,
        endpoint,
        interval,
        min_importance,
        max_auto,
        timeout,
    }
}
