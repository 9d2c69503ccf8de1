//! The `claude` provider: Anthropic Messages API (`POST {api_base}/v1/messages`) over SSE.

pub(super) mod decode;
pub(crate) mod wire;

use kernel_common::config::{ProviderConfig, ThinkingConfig, ThinkingMode};

use super::{EventStream, LlmError, ModelRequest, Provider, sse};
use crate::http::{Endpoint, HttpFailure};

/// The `anthropic-version` header value.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// An Anthropic Messages endpoint.
pub(crate) struct ClaudeProvider {
    name: String,
    endpoint: Endpoint,
    max_tokens: u32,
    timeouts: sse::Timeouts,
    thinking: Option<ThinkingConfig>,
}

impl std::fmt::Debug for ClaudeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaudeProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

impl ClaudeProvider {
    /// A provider from its config; needs `api_key` and `max_tokens`.
    pub(crate) fn new(cfg: &ProviderConfig, client: &reqwest::Client) -> Result<Self, LlmError> {
        let max_tokens = cfg.max_tokens.ok_or_else(|| LlmError::BadRequest {
            status: 0,
            message: format!(
                "provider `{}`: max_tokens is required for type claude",
                cfg.name
            ),
        })?;
        let endpoint = endpoint(
            client,
            &cfg.name,
            &cfg.api_base,
            cfg.api_key.as_ref(),
            &cfg.headers,
        )?;
        Ok(Self {
            name: cfg.name.clone(),
            endpoint,
            max_tokens,
            timeouts: sse::Timeouts::of(cfg),
            thinking: cfg.thinking.clone(),
        })
    }
}

/// The `/v1/messages` endpoint with `x-api-key`, `anthropic-version` and the extra headers.
pub(crate) fn endpoint(
    client: &reqwest::Client,
    name: &str,
    api_base: &str,
    key: Option<&kernel_common::Secret>,
    headers: &std::collections::BTreeMap<String, kernel_common::Secret>,
) -> Result<Endpoint, LlmError> {
    let key = key.ok_or_else(|| LlmError::Authentication {
        status: 0,
        message: format!("provider `{name}` has no api_key configured"),
    })?;
    let url = format!("{}/v1/messages", api_base.trim_end_matches('/'));
    let auth = Some(("x-api-key", key.expose().to_owned()));
    Ok(Endpoint::new(client, &url, auth, Some(key), headers)?
        .with_header("content-type", "application/json")
        .with_header("anthropic-version", ANTHROPIC_VERSION))
}

/// Anthropic's error types first (`overloaded_error` may come with any status), then the
/// generic status rules.
pub(crate) fn classify(f: &HttpFailure) -> Option<LlmError> {
    let message = f.message.clone();
    match f.kind.as_deref()? {
        "overloaded_error" => Some(LlmError::Overloaded {
            status: f.status,
            message,
        }),
        "rate_limit_error" => Some(LlmError::RateLimited {
            retry_after: f.retry_after,
            message,
        }),
        "authentication_error" | "permission_error" => Some(LlmError::Authentication {
            status: f.status,
            message,
        }),
        "api_error" if f.status < 500 => Some(LlmError::Overloaded {
            status: f.status,
            message,
        }),
        _ => None,
    }
}

#[async_trait::async_trait]
impl Provider for ClaudeProvider {
    async fn stream(&self, request: ModelRequest<'_>) -> Result<EventStream, LlmError> {
        let mut body = wire::body(&request, self.max_tokens, true);
        body.thinking = match self
            .thinking
            .as_ref()
            .and_then(|t| t.for_model(request.model))
        {
            Some(ThinkingMode::Budget(budget)) => Some(wire::Thinking::enabled(*budget)),
            Some(ThinkingMode::Effort(_)) | None => None,
        };
        if body.thinking.is_some() && !body.allows_thinking() {
            tracing::debug!(provider = %self.name, "thinking off for this call: the tool loop it continues has no thinking block");
            body.thinking = None;
        }
        tracing::debug!(provider = %self.name, model = request.model, messages = request.messages.len(), "anthropic request");
        sse::open(
            &self.endpoint,
            &body,
            self.timeouts,
            classify,
            decode::ClaudeDecoder::default(),
        )
        .await
    }
}
