//! The HTTP edge shared by every provider: building the client and header set, sending a JSON
//! request with a deadline, and turning failures (connect errors, HTTP statuses, error bodies)
//! into typed, redacted [`LlmError`]s.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use kernel_common::Secret;
use regex::Regex;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::LlmError;
use super::redactor::Redactor;

/// How long establishing a TCP/TLS connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Most characters of a provider's error message kept.
const MAX_MESSAGE_CHARS: usize = 1000;
/// Most bytes of an error body read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A configured endpoint: client, URL, headers (secret values marked sensitive) and the
/// redactor for everything it reports.
#[derive(Clone)]
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    redactor: Arc<Redactor>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint at `url`, sending `auth` (name, secret value) and the configured `extra`
    /// headers on every request.
    pub(crate) fn new(
        url: String,
        auth: Option<(&'static str, String)>,
        key: Option<&Secret>,
        extra: &BTreeMap<String, Secret>,
    ) -> Result<Self, LlmError> {
        let redactor = Arc::new(Redactor::new(key, extra));
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in extra {
            insert_secret(&mut headers, name, value.expose())?;
        }
        if let Some((name, value)) = auth {
            insert_secret(&mut headers, name, &value)?;
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| network_error(e, &redactor))?;
        Ok(Self {
            client,
            url,
            headers,
            redactor,
        })
    }

    /// Adds a fixed, non-secret header (e.g. `anthropic-version`).
    pub(crate) fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
        self
    }

    /// The redactor for this endpoint's secrets.
    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// POSTs `body` and waits at most `deadline` for the response head. A non-2xx status is
    /// read (bounded) and returned as a typed error via `classify`.
    pub(crate) async fn post(
        &self,
        body: Vec<u8>,
        deadline: Duration,
        classify: fn(&HttpFailure) -> Option<LlmError>,
    ) -> Result<reqwest::Response, LlmError> {
        let send = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body)
            .send();
        let response = match tokio::time::timeout(deadline, send).await {
            Err(_) => return Err(LlmError::Stalled { after: deadline }),
            Ok(Err(e)) => return Err(network_error(e, &self.redactor)),
            Ok(Ok(r)) => r,
        };
        if response.status().is_success() {
            return Ok(response);
        }
        let failure = HttpFailure::read(response, deadline, &self.redactor).await;
        tracing::debug!(status = failure.status, kind = ?failure.kind, "provider returned an error status");
        Err(classify(&failure).unwrap_or_else(|| failure.to_error()))
    }
}

fn insert_secret(headers: &mut HeaderMap, name: &str, value: &str) -> Result<(), LlmError> {
    let invalid = |what: &str| LlmError::BadRequest {
        status: 0,
        message: format!("invalid header {what} configured for header `{name}`"),
    };
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid("name"))?;
    let mut value = HeaderValue::from_str(value).map_err(|_| invalid("value"))?;
    value.set_sensitive(true);
    headers.insert(name, value);
    Ok(())
}

/// A reqwest failure as a redacted `Network` error (the URL is left out).
pub(crate) fn network_error(e: reqwest::Error, redactor: &Redactor) -> LlmError {
    LlmError::Network {
        message: redactor.redact(&error_chain(&e.without_url())),
    }
}

/// An error and its sources, `: `-joined.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// A non-2xx response, read and parsed into the provider's error kind and message (redacted).
#[derive(Debug, Clone)]
pub(crate) struct HttpFailure {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// `error.code` or else `error.type`, when the body had one.
    pub kind: Option<String>,
    /// The provider's message, redacted and bounded; the status reason when there was none.
    pub message: String,
}

impl HttpFailure {
    /// Reads the (bounded) body of a failed response.
    pub(crate) async fn read(
        response: reqwest::Response,
        deadline: Duration,
        redactor: &Redactor,
    ) -> Self {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = tokio::time::timeout(deadline, read_bounded(response))
            .await
            .unwrap_or_default();
        Self::from_body(status, retry_after, &body, redactor)
    }

    /// A failure from an already-read body.
    pub(crate) fn from_body(
        status: reqwest::StatusCode,
        retry_after: Option<Duration>,
        body: &str,
        redactor: &Redactor,
    ) -> Self {
        let (kind, message) = parse_error_body(body);
        let message = match message {
            Some(m) => redactor.redact(&truncate(&m, MAX_MESSAGE_CHARS)),
            None => status.canonical_reason().unwrap_or("error").to_owned(),
        };
        Self {
            status: status.as_u16(),
            retry_after,
            kind,
            message,
        }
    }

    /// The generic classification by status and message; providers refine it first.
    pub(crate) fn to_error(&self) -> LlmError {
        let (status, message) = (self.status, self.message.clone());
        match status {
            401 | 403 => LlmError::Authentication { status, message },
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

/// Up to 64 KiB of the body, lossily decoded.
pub(crate) async fn read_bounded(mut response: reqwest::Response) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// `retry-after` (seconds, possibly fractional) or `retry-after-ms`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let secs = get("retry-after").or_else(|| get("retry-after-ms").map(|ms| ms / 1000.0))?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// Finds the kind and message in an error body of any common shape: Anthropic
/// `{"type":"error","error":{"type","message"}}`, OpenAI `{"error":{"message","type","code"}}`,
/// `{"error":"…"}`, `{"message":"…"}`, `{"detail":"…"}`, a JSON array of those, or plain text.
pub(crate) fn parse_error_body(body: &str) -> (Option<String>, Option<String>) {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return (None, None);
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(value) => error_from_json(&value),
        Err(_) if trimmed.starts_with('<') => (None, None),
        Err(_) => (None, Some(collapse_whitespace(trimmed))),
    }
}

/// Kind and message from a parsed error object (also used for mid-stream error chunks). The
/// kind is the specific `code` when there is one (OpenAI `context_length_exceeded`), else the
/// `type` (Anthropic `overloaded_error`, OpenAI `server_error`).
pub(crate) fn error_from_json(value: &serde_json::Value) -> (Option<String>, Option<String>) {
    let value = match value.as_array() {
        Some(items) => items.first().unwrap_or(value),
        None => value,
    };
    let str_at =
        |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_owned);
    if let Some(error) = value.get("error") {
        if let Some(text) = error.as_str() {
            return (None, Some(text.to_owned()));
        }
        let kind = str_at(error, "code").or_else(|| str_at(error, "type"));
        let message = str_at(error, "message").or_else(|| Some(error.to_string()));
        return (kind, message);
    }
    let message = str_at(value, "message")
        .or_else(|| str_at(value, "detail"))
        .or_else(|| value.get("detail").map(|d| d.to_string()))
        .or_else(|| Some(value.to_string()));
    (
        str_at(value, "code").or_else(|| str_at(value, "type")),
        message,
    )
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to at most `max` characters (with `…` when cut).
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
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
    fn parses_common_error_shapes() {
        let a = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            parse_error_body(a),
            (Some("overloaded_error".into()), Some("Overloaded".into()))
        );
        let o = r#"{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        assert_eq!(parse_error_body(o).1.as_deref(), Some("bad key"));
        assert_eq!(
            parse_error_body(r#"{"error":"nope"}"#).1.as_deref(),
            Some("nope")
        );
        assert_eq!(
            parse_error_body(r#"{"detail":"Not Found"}"#).1.as_deref(),
            Some("Not Found")
        );
        assert_eq!(
            parse_error_body("plain  text\n here").1.as_deref(),
            Some("plain text here")
        );
        assert_eq!(parse_error_body("<html>502</html>"), (None, None));
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

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate("你好世界", 2), "你好…");
        assert_eq!(truncate("abc", 5), "abc");
    }
}
