//! A provider's context window: how many tokens a request may hold (`context_tokens`), how many
//! of them stay free for the answer (`reserve_output_tokens`), per-model overrides, defaults by
//! model family, and per-model prices for `/usage`.

use std::collections::BTreeMap;

/// When neither the config nor a known family says: small enough for any current model.
pub const FALLBACK_CONTEXT_TOKENS: u32 = 32_000;
/// `reserve_output_tokens` when not set and the provider has no `max_tokens`.
pub const DEFAULT_RESERVE_OUTPUT_TOKENS: u32 = 8_192;

/// Prices of one model, in USD per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl ModelPrice {
    /// The cost in USD of these token counts.
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        (input as f64 * self.input
            + output as f64 * self.output
            + cache_read as f64 * self.cache_read
            + cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// A provider's context settings as configured (`None` = use the default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextLimits {
    pub context_tokens: Option<u32>,
    pub reserve_output_tokens: Option<u32>,
    /// `model_context_tokens = { "model" = N }`: a model's own window.
    pub model_context_tokens: BTreeMap<String, u32>,
    /// `[providers.<name>.prices."model"]`.
    pub prices: BTreeMap<String, ModelPrice>,
}

/// The resolved window of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    pub context_tokens: u32,
    pub reserve_output_tokens: u32,
}

impl ContextWindow {
    /// What a request may hold: the window minus the reserve for the answer.
    pub fn input_budget(&self) -> u32 {
        self.context_tokens
            .saturating_sub(self.reserve_output_tokens)
    }
}

impl ContextLimits {
    /// The window of `model` (a per-model override, else the provider's `context_tokens`, else the
    /// model family's default); the reserve defaults to `max_tokens` (capped at a quarter of the
    /// window).
    pub fn window(&self, model: &str, max_tokens: Option<u32>) -> ContextWindow {
        let context_tokens = self
            .model_context_tokens
            .get(model)
            .copied()
            .or(self.context_tokens)
            .unwrap_or_else(|| family_default(model));
        let reserve = self
            .reserve_output_tokens
            .unwrap_or_else(|| max_tokens.unwrap_or(DEFAULT_RESERVE_OUTPUT_TOKENS))
            .min(context_tokens / 4);
        ContextWindow {
            context_tokens,
            reserve_output_tokens: reserve,
        }
    }
}

/// The context window of a known model family, by name; [`FALLBACK_CONTEXT_TOKENS`] otherwise.
pub fn family_default(model: &str) -> u32 {
    let m = model.to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    if has("claude") {
        200_000
    } else if has("gpt-4.1") || has("gemini") {
        1_000_000
    } else if has("gpt-5") {
        400_000
    } else if has("gpt-4o")
        || has("o1")
        || has("o3")
        || has("o4")
        || has("gpt-4-turbo")
        || has("deepseek")
        || has("kimi")
        || has("moonshot")
        || has("glm")
        || has("qwen")
        || has("llama")
        || has("mistral")
    {
        128_000
    } else {
        FALLBACK_CONTEXT_TOKENS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_resolve_override_then_provider_then_family() {
        let mut limits = ContextLimits::default();
        assert_eq!(
            limits.window("claude-sonnet-4-5", Some(16_384)),
            ContextWindow {
                context_tokens: 200_000,
                reserve_output_tokens: 16_384
            }
        );
        assert_eq!(
            limits.window("some-local-model", None).context_tokens,
            FALLBACK_CONTEXT_TOKENS
        );
        limits.context_tokens = Some(64_000);
        limits.model_context_tokens.insert("big".into(), 1_000_000);
        assert_eq!(limits.window("claude-x", None).context_tokens, 64_000);
        assert_eq!(limits.window("big", None).context_tokens, 1_000_000);
        limits.reserve_output_tokens = Some(60_000);
        assert_eq!(
            limits.window("claude-x", None).reserve_output_tokens,
            16_000,
            "the reserve never exceeds a quarter of the window"
        );
        assert_eq!(limits.window("claude-x", None).input_budget(), 48_000);
    }

    #[test]
    fn cost_is_per_million() {
        let p = ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        };
        let c = p.cost(1_000_000, 100_000, 2_000_000, 0);
        assert!((c - (3.0 + 1.5 + 0.6)).abs() < 1e-9, "{c}");
    }
}
