//! The one HTTP edge of kernel-agentd: every outbound API (providers, titles, STT, TTS) goes
//! through the one [`client`] (one connection pool, one root store) and an [`Endpoint`] (base
//! URL, auth and configured headers marked sensitive, the redactor for its secrets). Failures are
//! redacted and name no URL: [`HttpFailure`] reads a non-2xx answer, [`error_chain`] formats an
//! error with its sources.

use std::collections::BTreeMap;
use std::time::Duration;

use kernel_common::text::truncate;
use kernel_common::{Redactor, Secret};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

pub use reqwest::Client;

/// How long establishing a TCP/TLS connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an idle pooled connection is kept (reqwest's default is 90 s): the first turn after
/// a quiet spell should not pay a new TCP + TLS handshake to the provider (issue 51).
const POOL_IDLE: Duration = Duration::from_secs(20 * 60);
/// TCP keepalive on every connection, so a NAT keeps an idle pooled connection's mapping and a
/// silently dropped one is noticed instead of costing a request timeout.
const TCP_KEEPALIVE: Duration = Duration::from_secs(30);
/// Most characters of an endpoint's error message kept.
const MAX_MESSAGE_CHARS: usize = 1000;
/// Most bytes of an error body read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The client every endpoint shares; built once (`Agent::start`), cheap to clone.
pub fn client() -> Result<Client, reqwest::Error> {
    install_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_idle_timeout(POOL_IDLE)
        .tcp_keepalive(TCP_KEEPALIVE)
        .build()
}

/// Makes rustls over ring the process's TLS provider (idempotent). The workspace has one TLS
/// backend, ring, so the same code cross-builds for Windows with mingw; reqwest and rmcp are
/// built without a provider of their own and use this one. Call it before any HTTP client is
/// built ([`client`] does).
pub fn install_crypto_provider() {
    // An `Err` means a provider is installed already (by an earlier call): nothing to do.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A configured header that HTTP does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid header {what} configured for header `{name}`")]
pub struct HeaderError {
    what: &'static str,
    name: String,
}

/// A configured endpoint: the shared client, the base URL, the headers sent on every request
/// (secret values marked sensitive) and the redactor for everything it reports.
#[derive(Clone)]
pub struct Endpoint {
    client: reqwest::Client,
    base: String,
    headers: HeaderMap,
    redactor: Redactor,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint at `base` (a trailing `/` is dropped) on `client`, sending `auth` (header
    /// name, secret value) and the configured `extra` headers; `key` and the header values are
    /// redacted from everything it reports.
    pub fn new(
        client: &reqwest::Client,
        base: &str,
        auth: Option<(&str, String)>,
        key: Option<&Secret>,
        extra: &BTreeMap<String, Secret>,
    ) -> Result<Self, HeaderError> {
        let redactor = Redactor::new(key.map(Secret::expose))
            .with_header_values(extra.values().map(Secret::expose));
        let mut headers = HeaderMap::new();
        for (name, value) in extra {
            insert_secret(&mut headers, name, value.expose())?;
        }
        if let Some((name, value)) = auth {
            insert_secret(&mut headers, name, &value)?;
        }
        Ok(Self {
            client: client.clone(),
            base: base.trim_end_matches('/').to_owned(),
            headers,
            redactor,
        })
    }

    /// Adds a fixed, non-secret header (e.g. `anthropic-version`).
    pub fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
        self
    }

    /// A POST to `{base}{path}` with this endpoint's headers.
    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .headers(self.headers.clone())
    }

    /// The redactor for this endpoint's secrets.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A reqwest failure as a redacted message without the URL.
    pub fn network_message(&self, e: reqwest::Error) -> String {
        self.redactor.redact(&error_chain(&e.without_url()))
    }
}

fn insert_secret(headers: &mut HeaderMap, name: &str, value: &str) -> Result<(), HeaderError> {
    let invalid = |what| HeaderError {
        what,
        name: name.to_owned(),
    };
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid("name"))?;
    let mut value = HeaderValue::from_str(value).map_err(|_| invalid("value"))?;
    value.set_sensitive(true);
    headers.insert(header, value);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_that_is_missing_garbage_negative_or_days_long_is_none_or_capped() {
        let parse = |name: &str, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                reqwest::header::HeaderValue::from_str(value).unwrap(),
            );
            retry_after(&headers)
        };
        assert_eq!(retry_after(&HeaderMap::new()), None);
        assert_eq!(parse("retry-after", "2"), Some(Duration::from_secs(2)));
        assert_eq!(
            parse("retry-after", " 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse("retry-after-ms", "250"),
            Some(Duration::from_millis(250))
        );
        for garbage in [
            "soon",
            "-3",
            "NaN",
            "inf",
            "",
            "Wed, 21 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(parse("retry-after", garbage), None, "{garbage:?}");
        }
        assert_eq!(
            parse("retry-after", "99999999999"),
            Some(Duration::from_secs(86_400)),
            "days long is capped at a day (the retry budget then gives up)"
        );
    }

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
    fn endpoints_redact_their_key_and_header_values() {
        let headers = BTreeMap::from([("x-org".to_owned(), Secret::new("org-secret-value"))]);
        let key = Secret::new("sk-abcdefghijklmnop");
        let client = client().unwrap();
        let e = Endpoint::new(&client, "http://127.0.0.1:9/", None, Some(&key), &headers).unwrap();
        let out = e
            .redactor()
            .redact("key sk-abcdefghijklmnop and org-secret-value and Bearer sk-abcdefghijklmnop");
        assert!(!out.contains("sk-abcdefghijklmnop"));
        assert!(!out.contains("org-secret-value"));
        assert!(out.contains("sk-a…mnop"));
        assert!(out.contains("[REDACTED]"));
        let bad = BTreeMap::from([("x-bad".to_owned(), Secret::new("a\nb"))]);
        let err = Endpoint::new(&client, "http://x", None, None, &bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid header value configured for header `x-bad`"
        );
    }
}
