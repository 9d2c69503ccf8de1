//! The providers' side of the HTTP edge ([`crate::http`]): a JSON POST under a deadline, and
//! failures (connect errors, HTTP statuses, error bodies) classified into typed, redacted
//! [`LlmError`]s.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use super::LlmError;
use crate::http::{Endpoint, HeaderError, HttpFailure};

/// POSTs the JSON `body` to `endpoint` and waits at most `deadline` for the response head. A
/// non-2xx status is read (bounded) and returned as a typed error via `classify`.
pub(crate) async fn post(
    endpoint: &Endpoint,
    body: Vec<u8>,
    deadline: Duration,
    classify: fn(&HttpFailure) -> Option<LlmError>,
) -> Result<reqwest::Response, LlmError> {
    let send = endpoint.post("").body(body).send();
    let response = match tokio::time::timeout(deadline, send).await {
        Err(_) => return Err(LlmError::Stalled { after: deadline }),
        Ok(Err(e)) => return Err(network_error(endpoint, e)),
        Ok(Ok(r)) => r,
    };
    if response.status().is_success() {
        return Ok(response);
    }
    let failure = HttpFailure::read(response, deadline, endpoint.redactor()).await;
    tracing::debug!(status = failure.status, kind = ?failure.kind, "provider returned an error status");
    Err(classify(&failure).unwrap_or_else(|| failure.to_error()))
}

/// A reqwest failure as a redacted `Network` error (the URL is left out).
fn network_error(endpoint: &Endpoint, e: reqwest::Error) -> LlmError {
    LlmError::Network {
        message: endpoint.network_message(e),
    }
}

impl From<HeaderError> for LlmError {
    fn from(e: HeaderError) -> Self {
        LlmError::BadRequest {
            status: 0,
            message: e.to_string(),
        }
    }
}

impl HttpFailure {
    /// The generic classification by status and message; providers refine it first.
    pub(crate) fn to_error(&self) -> LlmError {
        let (status, message) = (self.status, self.message.clone());
        match status {
            // 402: the account cannot pay (billing), like a key without permission.
            401..=403 => LlmError::Authentication { status, message },
            429 => LlmError::RateLimited {
                retry_after: self.retry_after,
                message,
            },
            _ if is_context_too_long(&message)
                || self.kind.as_deref() == Some("context_length_exceeded") =>
            {
                LlmError::ContextTooLong { message }
            }
            _ if is_capability_missing(&message) => LlmError::CapabilityMissing {
                message: format!(
                    "the endpoint refused a feature Kernel needs ({status}): {message}"
                ),
            },
            404 if !message.to_lowercase().contains("model") => LlmError::CapabilityMissing {
                message: format!(
                    "the endpoint has no such API (404: {message}); check api_base and that it speaks this protocol"
                ),
            },
            500..=599 => LlmError::Overloaded { status, message },
            _ => LlmError::BadRequest { status, message },
        }
    }
}

/// Whether a provider message says the prompt exceeds the context window.
pub(crate) fn is_context_too_long(message: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)prompt is too long|context[ _-]length|context window|maximum context|too many (input )?tokens|input is too long|exceeds? the (model'?s? )?(maximum )?context",
        )
        .expect("valid regex")
    });
    RE.is_match(message)
}

/// Whether a provider message says the endpoint lacks tools, vision or streaming.
pub(crate) fn is_capability_missing(message: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(does not|doesn't|do not|don't|not|no endpoints found that) supports?\b.{0,40}\b(tool|function|vision|image|stream)|\b(tools?|tool use|tool calling|function calling|functions|vision|images?|image input|streaming)\b.{0,30}\b(is|are) not (supported|enabled|available)",
        )
        .expect("valid regex")
    });
    RE.is_match(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billing_and_auth_statuses_are_authentication_errors() {
        for status in [401, 402, 403] {
            let failure = HttpFailure {
                status,
                retry_after: None,
                kind: None,
                message: "insufficient credit".into(),
            };
            assert!(
                matches!(failure.to_error(), LlmError::Authentication { status: s, .. } if s == status),
                "{status}"
            );
        }
    }

    #[test]
    fn recognises_context_and_capability_messages() {
        assert!(is_context_too_long(
            "prompt is too long: 210000 tokens > 200000 maximum"
        ));
        assert!(is_context_too_long(
            "This model's maximum context length is 8192 tokens"
        ));
        assert!(!is_context_too_long("invalid tool name"));
        assert!(is_capability_missing("this model does not support tools"));
        assert!(is_capability_missing(
            "Image input is not supported for this model"
        ));
        assert!(is_capability_missing(
            "No endpoints found that support tool use"
        ));
        assert!(!is_capability_missing(
            "messages.1: text content blocks must be non-empty"
        ));
    }
}
