//! LLM providers behind one interface: a streaming model call over the internal conversation
//! model, with typed, redacted errors.

pub(crate) mod claude;
pub mod error;
pub(crate) mod http;
pub(crate) mod json_answer;
pub(crate) mod openai;
#[cfg(test)]
mod quirks;
pub mod retry;
mod sse;
pub mod titles;

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use kernel_common::config::{ProviderConfig, ProviderKind};

use crate::conversation::{Message, ToolSpec, Usage};

pub use error::LlmError;

/// One model call.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    pub model: &'a str,
    /// The system prompt: byte-stable across turns (cacheable prefix).
    pub system: &'a str,
    /// Tools offered; empty means "answer without tools".
    pub tools: &'a [ToolSpec],
    pub messages: &'a [Message],
    /// `messages[..stable_prefix]` is the part that repeats unchanged in the next request of
    /// this conversation; Anthropic puts a `cache_control` breakpoint at its last block
    /// (0 = only system + tools are cached).
    pub stable_prefix: usize,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// A final answer.
    EndTurn,
    /// The model wants tools run (also when a provider said "stop" but sent tool calls).
    ToolUse,
    /// Output hit `max_tokens`.
    MaxTokens,
    /// Anything else the provider said.
    Other(String),
}

/// The complete result of one model call.
#[derive(Debug, Clone)]
pub struct ModelResponse {
    /// The assistant message: text, tool calls (inputs parsed), reasoning blocks.
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

/// What a streaming model call yields.
#[derive(Debug, Clone)]
pub enum StreamEvent {
    /// Answer text to show now.
    TextDelta(String),
    /// The model began a tool call (its input is still streaming).
    ToolCallStarted { id: String, name: String },
    /// The call finished; always the last item of a successful stream.
    Done(ModelResponse),
}

/// A stream of events; ends after `Done` or the first error. Dropping it aborts the request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// The readable reasoning in `message` (Anthropic `thinking` text, OpenAI-compatible
/// `reasoning_content`), joined; redacted thinking has none. Empty when there is none.
pub fn reasoning_text(message: &Message) -> String {
    let parts: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            crate::conversation::Block::Reasoning { provider, data } => {
                let key = match provider.as_str() {
                    claude::wire::PROVIDER_TAG => "thinking",
                    openai::wire::PROVIDER_TAG => "reasoning_content",
                    _ => return None,
                };
                data.get(key).and_then(serde_json::Value::as_str)
            }
            _ => None,
        })
        .filter(|text| !text.trim().is_empty())
        .collect();
    parts.join("\n\n")
}

/// A model endpoint.
#[async_trait::async_trait]
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// Starts a streaming call. Errors before the first byte (HTTP status, connect) come back
    /// here; errors after it come through the stream.
    async fn stream(&self, request: ModelRequest<'_>) -> Result<EventStream, LlmError>;
}

/// The provider for `cfg` (`claude` or `openai_compat`) on the shared `client`
/// ([`crate::http::client`]). Fails when the config cannot work: no key, `claude` without
/// `max_tokens`, an invalid header.
pub fn build(
    cfg: &ProviderConfig,
    client: &reqwest::Client,
) -> Result<Arc<dyn Provider>, LlmError> {
    Ok(match cfg.kind {
        ProviderKind::Claude => Arc::new(claude::ClaudeProvider::new(cfg, client)?),
        ProviderKind::OpenAiCompat => Arc::new(openai::OpenAiProvider::new(cfg, client)?),
    })
}
