//! The model providers' keys: `[providers.<name>]` (its wire protocol, endpoint, models,
//! timeouts, retries, context, thinking and image limits) and `[titles]`, validated.

use std::collections::BTreeMap;

use super::{context, images, retry};
use crate::secret::Secret;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Claude,
    /// OpenAI-compatible `/chat/completions`.
    OpenAiCompat,
}

impl ProviderKind {
    /// The config spelling: `claude` or `openai_compat`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::OpenAiCompat => "openai_compat",
        }
    }
}

/// `[providers.<name>]`.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub name: String,
    pub kind: ProviderKind,
    /// Base URL without trailing slash. Defaults: claude `https://api.anthropic.com`,
    /// openai_compat `https://api.openai.com/v1`.
    pub api_base: String,
    /// `None` makes the provider unavailable (fatal only for the default provider).
    pub api_key: Option<Secret>,
    /// Required for `claude`; optional for `openai_compat`.
    pub max_tokens: Option<u32>,
    pub default_model: String,
    /// Allowed models; always contains `default_model`.
    pub models: Vec<String>,
    /// Extra headers sent on every request (values are secrets: never logged).
    pub headers: BTreeMap<String, Secret>,
    /// No bytes for this long ends the stream with a stall error (default 120 s).
    pub stream_idle_timeout: std::time::Duration,
    /// No answer bytes (response head and first stream data) this long after the request ends
    /// the call with a stall error (default 300 s: reasoning models think before they write).
    pub first_byte_timeout: std::time::Duration,
    /// Retries on the same provider after a transient failure.
    pub retry: retry::RetryConfig,
    /// The context window settings and per-model prices.
    pub context: context::ContextLimits,
    /// Extended thinking / reasoning effort asked for; `None`: the provider's default.
    pub thinking: Option<ThinkingConfig>,
    /// `max_image_bytes` / `max_image_side_px`: bigger images are scaled down to fit.
    pub images: images::ImageLimits,
}

/// `[providers.<name>.thinking]`: how much the model reasons before answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThinkingConfig {
    pub mode: ThinkingMode,
    /// Models it applies to; empty: every model of the provider.
    pub models: Vec<String>,
}

impl ThinkingConfig {
    /// The mode for `model`, if thinking applies to it.
    pub fn for_model(&self, model: &str) -> Option<&ThinkingMode> {
        (self.models.is_empty() || self.models.iter().any(|m| m == model)).then_some(&self.mode)
    }
}

/// What a provider kind takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThinkingMode {
    /// Anthropic extended thinking: `thinking: {type: "enabled", budget_tokens}` (at least 1024,
    /// below `max_tokens`).
    Budget(u32),
    /// OpenAI-compatible `reasoning_effort` (`minimal`, `low`, `medium`, `high`).
    Effort(String),
}

impl ProviderConfig {
    /// Whether the provider can be used (has a key).
    pub fn available(&self) -> bool {
        self.api_key.is_some()
    }

    /// The context window of `model` on this provider.
    pub fn window(&self, model: &str) -> context::ContextWindow {
        self.context.window(model, self.max_tokens)
    }
}

/// The provider name the usage ledger records `[titles]` calls under.
pub const TITLES_PROVIDER: &str = "titles";

/// `[titles]`: an independent provider config for session titles.
#[derive(Debug, Clone)]
pub struct TitlesConfig {
    /// The provider its calls are recorded under in the usage ledger (prices, per-provider
    /// budgets): `titles` for `[titles]`, else the `[providers.<name>]` entry it uses.
    pub provider: String,
    pub kind: ProviderKind,
    pub api_base: String,
    pub api_key: Option<Secret>,
    pub model: String,
    pub max_tokens: u32,
    pub headers: BTreeMap<String, Secret>,
    /// Retries on the same endpoint after a transient failure.
    pub retry: retry::RetryConfig,
}
