//! The `openai_compat` provider: `POST {api_base}/chat/completions` over SSE, tolerant of what
//! real compatible servers do (no `[DONE]`, usage late or never, `reasoning_content`, …).

pub(super) mod decode;
mod think;
pub(crate) mod wire;

use std::collections::BTreeMap;

use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ThinkingConfig, ThinkingMode};

use super::{EventStream, LlmError, ModelRequest, Provider, sse};
use crate::http::{Endpoint, HttpFailure};
pub(crate) use decode::parse_usage as usage_of;

/// An OpenAI-compatible chat-completions endpoint.
pub(crate) struct OpenAiProvider {
    name: String,
    endpoint: Endpoint,
    max_tokens: Option<u32>,
    timeouts: sse::Timeouts,
    thinking: Option<ThinkingConfig>,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

impl OpenAiProvider {
    /// A provider from its config; needs `api_key`.
    pub(crate) fn new(cfg: &ProviderConfig, client: &reqwest::Client) -> Result<Self, LlmError> {
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
            max_tokens: cfg.max_tokens,
            timeouts: sse::Timeouts::of(cfg),
            thinking: cfg.thinking.clone(),
        })
    }
}

/// The `/chat/completions` endpoint with a Bearer key and the extra headers.
pub(crate) fn endpoint(
    client: &reqwest::Client,
    name: &str,
    api_base: &str,
    key: Option<&Secret>,
    headers: &BTreeMap<String, Secret>,
) -> Result<Endpoint, LlmError> {
    let key = key.ok_or_else(|| LlmError::Authentication {
        status: 0,
        message: format!("provider `{name}` has no api_key configured"),
    })?;
    let url = format!("{}/chat/completions", api_base.trim_end_matches('/'));
    let auth = Some(("authorization", format!("Bearer {}", key.expose())));
    Ok(Endpoint::new(client, &url, auth, Some(key), headers)?
        .with_header("content-type", "application/json"))
}

/// OpenAI's error codes first, then the generic status rules.
pub(crate) fn classify(f: &HttpFailure) -> Option<LlmError> {
    let message = f.message.clone();
    match f.kind.as_deref()? {
        "invalid_api_key" | "authentication_error" => Some(LlmError::Authentication {
            status: f.status,
            message,
        }),
        "context_length_exceeded" | "string_above_max_length" => {
            Some(LlmError::ContextTooLong { message })
        }
        "rate_limit_exceeded" | "insufficient_quota" => Some(LlmError::RateLimited {
            retry_after: f.retry_after,
            message,
        }),
        _ => None,
    }
}

#[async_trait::async_trait]
impl Provider for OpenAiProvider {
    async fn stream(&self, request: ModelRequest<'_>) -> Result<EventStream, LlmError> {
        let mut body = wire::body(&request, self.max_tokens, true);
        body.reasoning_effort = match self
            .thinking
            .as_ref()
            .and_then(|t| t.for_model(request.model))
        {
            Some(ThinkingMode::Effort(effort)) => Some(effort.clone()),
            Some(ThinkingMode::Budget(_)) | None => None,
        };
        tracing::debug!(provider = %self.name, model = request.model, messages = request.messages.len(), "chat completions request");
        sse::open(
            &self.endpoint,
            &body,
            self.timeouts,
            classify,
            decode::OpenAiDecoder::default(),
        )
        .await
    }
}
