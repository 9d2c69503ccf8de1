//! `LlmError`: what can go wrong calling a model, typed so the turn loop can decide.
//!
//! Every message is redacted before it is stored here: no keys, no header values.

use std::time::Duration;

use kernel_common::Redactor;

/// A failed model call. `Display` is safe to show the owner.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum LlmError {
    /// 401/403: the key is wrong or lacks permission; 402: billing.
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

    /// This error with every message it carries redacted by `redactor`.
    pub fn redacted(self, redactor: &Redactor) -> LlmError {
        use LlmError as E;
        let r = |m: String| redactor.redact(&m);
        match self {
            E::Authentication { status, message } => E::Authentication {
                status,
                message: r(message),
            },
            E::RateLimited {
                retry_after,
                message,
            } => E::RateLimited {
                retry_after,
                message: r(message),
            },
            E::Overloaded { status, message } => E::Overloaded {
                status,
                message: r(message),
            },
            E::BadRequest { status, message } => E::BadRequest {
                status,
                message: r(message),
            },
            E::ContextTooLong { message } => E::ContextTooLong {
                message: r(message),
            },
            E::CapabilityMissing { message } => E::CapabilityMissing {
                message: r(message),
            },
            E::Network { message } => E::Network {
                message: r(message),
            },
            E::Stream { message } => E::Stream {
                message: r(message),
            },
            E::Stalled { after } => E::Stalled { after },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_redacted() {
        let r = Redactor::new(["sk-abcdefghijklmnop"]);
        let e = LlmError::Authentication {
            status: 401,
            message: "bad key sk-abcdefghijklmnop".into(),
        }
        .redacted(&r);
        assert_eq!(
            e,
            LlmError::Authentication {
                status: 401,
                message: "bad key sk-a…mnop".into()
            }
        );
    }
}
