//! The titles client: a non-streaming "give me a short title" call with the independent
//! `[titles]` provider, and the clean-up of what models answer (`<think>` blocks, quotes,
//! prefixes, trailing punctuation, length). The background jobs on a cheap model (auto memory,
//! summary rewrite, memory consolidation) call it too ([`TitlesClient::complete`]); every call
//! that returns lands in the usage ledger with its [`Purpose`], so it counts toward the budgets.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use kernel_common::config::{ProviderKind, TitlesConfig};
use kernel_common::text::truncate;
use regex::Regex;
use serde_json::Value;

use kernel_common::config::retry::RetryConfig;
use tokio_util::sync::CancellationToken;

use super::{LlmError, ModelRequest, claude, openai};
use crate::conversation::{Message, Purpose, Usage};
use crate::http::{Endpoint, read_bounded};

/// Where a client's calls are recorded (agentd's usage ledger implements it).
#[async_trait::async_trait]
pub trait RecordUsage: Send + Sync {
    /// Records one call of `model` at `provider` for `purpose` (a failure is only logged).
    async fn record_call(&self, provider_model: (&str, &str), purpose: Purpose, usage: &Usage);
}

/// The whole call (connect, generate, read) must finish within this.
const TITLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Most characters of each input passed to the model.
const MAX_INPUT_CHARS: usize = 1500;
/// Longest title kept (characters).
pub const MAX_TITLE_CHARS: usize = 30;

const SYSTEM: &str = "You name chat sessions. Reply with the title only: at most 20 characters \
for Chinese, or at most 6 words for other languages, in the language the user wrote in. \
No quotes, no trailing punctuation, no explanation.";

/// A client for the `[titles]` provider.
pub struct TitlesClient {
    /// The provider name its calls are recorded under.
    provider: String,
    /// Where each call's tokens are recorded (every client agentd builds has one).
    ledger: Option<Arc<dyn RecordUsage>>,
    kind: ProviderKind,
    endpoint: Endpoint,
    model: String,
    max_tokens: u32,
    retry: RetryConfig,
}

impl std::fmt::Debug for TitlesClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TitlesClient")
            .field("provider", &self.provider)
            .field("kind", &self.kind)
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .finish()
    }
}

impl TitlesClient {
    /// A client from the `[titles]` config (or a job's endpoint); needs `api_key`. Agentd
    /// always adds [`TitlesClient::recording`].
    pub fn new(cfg: &TitlesConfig, client: &reqwest::Client) -> Result<Self, LlmError> {
        let key = cfg.api_key.as_ref();
        let endpoint = match cfg.kind {
            ProviderKind::Claude => {
                claude::endpoint(client, "titles", &cfg.api_base, key, &cfg.headers)?
            }
            ProviderKind::OpenAiCompat => {
                openai::endpoint(client, "titles", &cfg.api_base, key, &cfg.headers)?
            }
        };
        Ok(Self {
            provider: cfg.provider.clone(),
            ledger: None,
            kind: cfg.kind,
            endpoint,
            model: cfg.model.clone(),
            max_tokens: cfg.max_tokens,
            retry: cfg.retry,
        })
    }

    /// This client, recording each call's tokens in `ledger` under `cfg.provider` (so titles
    /// and the background jobs count toward the budgets).
    #[must_use]
    pub fn recording(mut self, ledger: Arc<dyn RecordUsage>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// The client of a background job on the cheap model (auto memory, summary rewrite, memory
    /// consolidation): none when the job has no endpoint (or is off: the caller passes `None`);
    /// every call recorded in `ledger`.
    pub fn for_background(
        endpoint: Option<&TitlesConfig>,
        http: &reqwest::Client,
        ledger: Arc<dyn RecordUsage>,
    ) -> Result<Option<Self>, LlmError> {
        endpoint
            .map(|e| Ok(Self::new(e, http)?.recording(ledger)))
            .transpose()
    }

    /// A short title for a session that began with `first_user` and `first_answer`.
    pub async fn title(&self, first_user: &str, first_answer: &str) -> Result<String, LlmError> {
        let prompt = format!(
            "Give this conversation a short title.\n\nUser: {}\n\nAssistant: {}\n\nTitle:",
            truncate(first_user.trim(), MAX_INPUT_CHARS),
            truncate(first_answer.trim(), MAX_INPUT_CHARS),
        );
        let messages = [Message::user_text(prompt)];
        let request = ModelRequest {
            model: &self.model,
            system: SYSTEM,
            tools: &[],
            messages: &messages,
            stable_prefix: 0,
        };
        let never = CancellationToken::new();
        let call = super::retry::run(self.retry, "titles", &never, || {
            self.call_within(&request, TITLE_TIMEOUT, Purpose::Title)
        });
        let raw = tokio::time::timeout(TITLE_TIMEOUT, call)
            .await
            .map_err(|_| LlmError::Stalled {
                after: TITLE_TIMEOUT,
            })??;
        clean_title(&raw).ok_or_else(|| LlmError::Stream {
            message: "the model returned an empty title".to_owned(),
        })
    }

    /// One non-streaming call for `purpose` with `system` and a single user `prompt`, given
    /// `timeout` in all (retries on the `[titles]` policy included); the answer text as the
    /// model wrote it (the background jobs on a cheap model use this endpoint; memory
    /// consolidation passes [`Purpose::Consolidation`]).
    pub async fn complete(
        &self,
        purpose: Purpose,
        system: &str,
        prompt: String,
        timeout: Duration,
    ) -> Result<String, LlmError> {
        let messages = [Message::user_text(prompt)];
        let request = ModelRequest {
            model: &self.model,
            system,
            tools: &[],
            messages: &messages,
            stable_prefix: 0,
        };
        let never = CancellationToken::new();
        let call = super::retry::run(self.retry, "titles", &never, || {
            self.call_within(&request, timeout, purpose)
        });
        tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| LlmError::Stalled { after: timeout })?
    }

    /// Sends the request (the HTTP exchange bounded by `timeout`), records its usage for
    /// `purpose`, and returns the answer text.
    async fn call_within(
        &self,
        request: &ModelRequest<'_>,
        timeout: Duration,
        purpose: Purpose,
    ) -> Result<String, LlmError> {
        let (bytes, classify): (_, fn(&_) -> _) = match self.kind {
            ProviderKind::Claude => (
                serde_json::to_vec(&claude::wire::body(request, self.max_tokens, false)),
                claude::classify,
            ),
            ProviderKind::OpenAiCompat => (
                serde_json::to_vec(&openai::wire::body(request, Some(self.max_tokens), false)),
                openai::classify,
            ),
        };
        let bytes = bytes.map_err(|e| LlmError::BadRequest {
            status: 0,
            message: format!("cannot serialize: {e}"),
        })?;
        let response = super::http::post(&self.endpoint, bytes, timeout, classify).await?;
        let body = read_bounded(response).await;
        let value: Value = serde_json::from_str(&body).map_err(|e| LlmError::Stream {
            message: format!("malformed JSON in the title response: {e}"),
        })?;
        let usage = match (self.kind, value.get("usage").filter(|u| u.is_object())) {
            (_, None) => Usage::default(),
            (ProviderKind::Claude, Some(u)) => claude_usage(u),
            (ProviderKind::OpenAiCompat, Some(u)) => openai::usage_of(u),
        };
        if let Some(ledger) = &self.ledger {
            ledger
                .record_call((&self.provider, request.model), purpose, &usage)
                .await;
        }
        let text = match self.kind {
            ProviderKind::Claude => claude_text(&value),
            ProviderKind::OpenAiCompat => openai_text(&value),
        };
        text.ok_or_else(|| {
            let message = "the title response has no text".to_owned();
            LlmError::Stream { message }.redacted(self.endpoint.redactor())
        })
    }
}

/// The `usage` of an Anthropic message.
fn claude_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_tokens: n("cache_read_input_tokens"),
        cache_write_tokens: n("cache_creation_input_tokens"),
    }
}

/// The joined `text` blocks of an Anthropic message.
fn claude_text(value: &Value) -> Option<String> {
    let blocks = value.get("content")?.as_array()?;
    Some(
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
    )
}

/// `choices[0].message.content` of a chat completion.
fn openai_text(value: &Value) -> Option<String> {
    let message = value.get("choices")?.get(0)?.get("message")?;
    Some(
        message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The title in a model's answer: `<think>…</think>` removed (also an unclosed `<think>` running
/// to the end, and reasoning before a lone `</think>`), the first non-empty line, a `Title:`
/// prefix, surrounding quotes/markup and trailing punctuation stripped, at most
/// [`MAX_TITLE_CHARS`] characters. `None` when nothing is left.
pub fn clean_title(raw: &str) -> Option<String> {
    static THINK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\z)").expect("valid regex")
    });
    static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(?:title|标题|題目|题目)\s*[:：]\s*").expect("valid regex")
    });
    let without_think = THINK.replace_all(raw, "");
    let after_close = match without_think.rfind("</think>") {
        Some(at) => &without_think[at + "</think>".len()..],
        None => &without_think[..],
    };
    let line = after_close.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = PREFIX.replace(line, "");
    const EDGE: &[char] = &[
        '"', '\'', '“', '”', '‘', '’', '「', '」', '『', '』', '《', '》', '`', '*', '#', '_',
    ];
    const TRAILING: &[char] = &[
        '.', '。', '!', '！', '?', '？', ',', '，', ';', '；', ':', '：', '、', '…',
    ];
    let trim = |s: &str| -> String {
        s.trim_matches(|c: char| c.is_whitespace() || EDGE.contains(&c))
            .trim_end_matches(TRAILING)
            .to_owned()
    };
    let mut title = trim(&line);
    title = trim(&title);
    let title = kernel_common::text::head(&title, MAX_TITLE_CHARS)
        .trim()
        .to_owned();
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_think_quotes_and_punctuation() {
        assert_eq!(
            clean_title("<think>hmm, a title?</think>\n\n\"Rust 异步入门\"。").as_deref(),
            Some("Rust 异步入门")
        );
        assert_eq!(
            clean_title("Title: Fixing the build.").as_deref(),
            Some("Fixing the build")
        );
        assert_eq!(
            clean_title("标题：「周末计划」").as_deref(),
            Some("周末计划")
        );
        assert_eq!(clean_title("<think>never closed, all reasoning"), None);
        assert_eq!(
            clean_title("reasoning without an opening tag</think>Trip plans").as_deref(),
            Some("Trip plans")
        );
        assert_eq!(
            clean_title("  \n**Weekly report**\nmore text").as_deref(),
            Some("Weekly report")
        );
    }

    #[test]
    fn caps_length() {
        let long = "字".repeat(100);
        assert_eq!(
            clean_title(&long).map(|t| t.chars().count()),
            Some(MAX_TITLE_CHARS)
        );
    }
}
