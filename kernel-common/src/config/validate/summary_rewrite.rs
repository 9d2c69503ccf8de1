//! `[summary]`: whether a cheap model rewrites session summaries after rounds fold (off by
//! default), which endpoint it calls (the `[titles]` one, or a configured provider), and its
//! limits.

use std::collections::BTreeMap;
use std::time::Duration;

use super::Ctx;
use crate::config::raw::RawSummary;
use crate::config::{
    Component, DEFAULT_SUMMARY_MIN_NEW_ROUNDS, ProviderConfig, SummaryRewriteConfig, TitlesConfig,
};

/// `summary.max_tokens` when not set: room for a summary's JSON.
const DEFAULT_MAX_TOKENS: u32 = 1024;
/// `summary.timeout_secs` when not set.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest `min_new_rounds` accepted.
const MAX_MIN_NEW_ROUNDS: u32 = 1000;

/// The validated `[summary]` (missing or without `enabled = true`: off, and nothing in it is
/// needed).
pub(super) fn summary_rewrite(
    ctx: &mut Ctx<'_>,
    raw: Option<&RawSummary>,
    titles: Option<&TitlesConfig>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> SummaryRewriteConfig {
    let default = RawSummary::default();
    let raw = raw.unwrap_or(&default);
    let max_tokens = match raw.max_tokens {
        None => DEFAULT_MAX_TOKENS,
        Some(0) => {
            ctx.refuse("summary.max_tokens must be at least 1: set e.g. max_tokens = 1024");
            DEFAULT_MAX_TOKENS
        }
        Some(n) => n,
    };
    let endpoint = super::cheap_model::endpoint(
        ctx,
        "summary",
        (raw.provider.as_deref(), raw.model.as_deref()),
        max_tokens,
        titles,
        providers,
    );
    let usable = endpoint.as_ref().is_some_and(|e| e.api_key.is_some());
    let enabled = raw.enabled == Some(true);
    if enabled && !usable {
        ctx.refuse_for(
            Component::Agentd,
            "summary.enabled = true but it has no usable provider: configure [titles] with an \
             api_key, or set summary.provider to a provider with a key",
        );
    }
    let min_new_rounds = match raw.min_new_rounds {
        None => DEFAULT_SUMMARY_MIN_NEW_ROUNDS,
        Some(n @ 1..=MAX_MIN_NEW_ROUNDS) => u64::from(n),
        Some(_) => {
            ctx.refuse(format!(
                "summary.min_new_rounds must be between 1 and {MAX_MIN_NEW_ROUNDS} rounds \
                 (default {DEFAULT_SUMMARY_MIN_NEW_ROUNDS})"
            ));
            DEFAULT_SUMMARY_MIN_NEW_ROUNDS
        }
    };
    let timeout = raw.timeout_secs.map_or(DEFAULT_TIMEOUT, |secs| {
        ctx.timeout_secs("summary.timeout_secs", secs, DEFAULT_TIMEOUT)
    });
    SummaryRewriteConfig {
        enabled: enabled && usable,
        endpoint,
        min_new_rounds,
        timeout,
    }
}
