//! `[embeddings]`: the OpenAI-compatible embeddings endpoint behind hybrid memory search.

use std::time::Duration;

use super::providers::{OPENAI_BASE, headers};
use super::{Ctx, given};
use crate::config::env::EMBEDDINGS_API_KEY_ENV;
use crate::config::raw::RawEmbeddings;
use crate::config::{
    DEFAULT_E5_MIN_SIMILARITY, DEFAULT_EMBEDDINGS_TIMEOUT, DEFAULT_MIN_SIMILARITY,
    DEFAULT_RECALL_BUDGET, EmbeddingsConfig, InputStyle,
};

/// The largest `recall_budget_ms` accepted (a turn must not wait longer for recall).
const MAX_RECALL_BUDGET_MS: u64 = 10_000;
/// The largest `dimensions` accepted.
const MAX_DIMENSIONS: u32 = 8192;

/// `[embeddings]`: model defaults to `text-embedding-3-small`; `None` when malformed (with a
/// problem).
pub(super) fn embeddings(ctx: &mut Ctx<'_>, raw: &RawEmbeddings) -> Option<EmbeddingsConfig> {
    let timeout = raw.timeout_secs.map_or(DEFAULT_EMBEDDINGS_TIMEOUT, |secs| {
        ctx.timeout_secs("embeddings.timeout_secs", secs, DEFAULT_EMBEDDINGS_TIMEOUT)
    });
    let recall_budget = match raw.recall_budget_ms {
        None => Some(DEFAULT_RECALL_BUDGET),
        Some(ms @ 1..=MAX_RECALL_BUDGET_MS) => Some(Duration::from_millis(ms)),
        Some(_) => {
            ctx.refuse(format!(
                "embeddings.recall_budget_ms must be between 1 and {MAX_RECALL_BUDGET_MS} \
                 (default {})",
                DEFAULT_RECALL_BUDGET.as_millis()
            ));
            None
        }
    };
    let dimensions = match raw.dimensions {
        Some(0) | Some(MAX_DIMENSIONS..) => {
            ctx.refuse(format!(
                "embeddings.dimensions must be between 1 and {}",
                MAX_DIMENSIONS - 1
            ));
            None
        }
        d => Some(d),
    };
    let model = given(raw.model.as_deref())
        .unwrap_or("text-embedding-3-small")
        .trim()
        .to_owned();
    let input_style = match given(raw.input_style.as_deref()).map(str::trim) {
        None | Some("auto") if model.to_ascii_lowercase().contains("e5") => Some(InputStyle::E5),
        None | Some("auto") | Some("plain") => Some(InputStyle::Plain),
        Some("e5") => Some(InputStyle::E5),
        Some("input_type") => Some(InputStyle::InputType),
        Some(other) => {
            ctx.refuse(format!(
                "embeddings.input_style = \"{other}\" is unknown: use \"auto\", \"plain\", \
                 \"e5\" (query:/passage: prefixes) or \"input_type\""
            ));
            None
        }
    };
    let min_similarity = match raw.min_similarity {
        None if model.to_ascii_lowercase().contains("e5") => Some(DEFAULT_E5_MIN_SIMILARITY),
        None => Some(DEFAULT_MIN_SIMILARITY),
        Some(v) if (0.0..=1.0).contains(&v) => Some(v as f32),
        Some(v) => {
            ctx.refuse(format!(
                "embeddings.min_similarity = {v} must be between 0 and 1 (0 keeps every \
                 vector hit; default {DEFAULT_E5_MIN_SIMILARITY} for e5 models, else \
                 {DEFAULT_MIN_SIMILARITY})"
            ));
            None
        }
    };
    let headers = headers(ctx, "embeddings", raw.headers.as_ref());
    Some(EmbeddingsConfig {
        api_base: ctx.url("embeddings.api_base", raw.api_base.as_deref(), OPENAI_BASE),
        api_key: ctx.secret(raw.api_key.as_deref(), EMBEDDINGS_API_KEY_ENV),
        model,
        dimensions: dimensions?,
        input_style: input_style?,
        headers,
        timeout,
        recall_budget: recall_budget?,
        min_similarity: min_similarity?,
    })
}
