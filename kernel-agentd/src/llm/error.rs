//! `LlmError`: what can go wrong calling a model, typed so the turn loop can decide.
//!
//! Every message is redacted before it is stored here: no keys, no header values.

use std::time::Duration;

/// A failed model call. `Display` is safe to show the owner.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum LlmError {
    /// 401/403: the key is wrong or lacks permission.
    #[error("authentication failed ({status}): {message}")]
    Authentication { status: u16, message: String },
    /// 429.
    #[error("rate limited{}: {message}", retry_after.map(|d| format!(" (retry after {}s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// 5xx, Anthropic 529 `overloaded_error`.
    #[error("provider unavailable ({status}): {message}")]
    Overloaded { status: u16, message: String },
    /// 400 and other 4xx: the provider's own message.
    #[error("bad request ({status}): {message}")]
    BadRequest { status: u16, message: String },
    /// The prompt does not fit the model's context window.
    #[error("context too long: {message}")]
    ContextTooLong { message: String },
    /// The endpoint lacks streaming/tools/vision; never silently downgraded.
    #[error("{message}; switch provider or model (/provider, /model)")]
    CapabilityMissing { message: String },
    /// Connect/read failure.
    #[error("network error: {message}")]
    Network { message: String },
    /// No bytes for the idle timeout.
    #[error("stream stalled: no data for {}s", after.as_secs())]
    Stalled { after: Duration },
    /// The stream broke the wire format, ended early, or the provider sent an error event.
    #[error("stream error: {message}")]
    Stream { message: String },
}

impl LlmError {
    /// Whether retrying the same request later may succeed (network, 5xx, stall).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Overloaded { .. } | Self::Network { .. } | Self::Stalled { .. }
        )
    }
}
