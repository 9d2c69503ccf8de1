//! The HTTP edge of the speech endpoints (`[stt]`, `[tts]`): one POST with the key as
//! `Authorization: Bearer` and the configured headers (all marked sensitive), under a deadline
//! and the turn's cancellation token, with a bounded answer. Every error is redacted (key, header
//! values, credential patterns) and names no URL.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kernel_common::Secret;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::llm::http::{HttpFailure, error_chain};
use crate::llm::redactor::Redactor;

/// How long establishing a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Why a speech request failed. Messages are redacted and meant for the owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpeechError {
    /// The owner cancelled the turn.
    #[error("cancelled")]
    Cancelled,
    /// No complete answer in time.
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    /// The endpoint could not be reached.
    #[error("cannot reach the endpoint: {0}")]
    Network(String),
    /// A non-2xx answer with the endpoint's own words.
    #[error("the endpoint answered {status}: {message}")]
    Status { status: u16, message: String },
    /// A 2xx answer Kernel cannot use.
    #[error("{0}")]
    BadResponse(String),
    /// The configuration cannot be used (e.g. a header value HTTP does not allow).
    #[error("{0}")]
    Config(String),
}

/// What goes in the request body.
#[derive(Debug)]
pub enum Body {
    Multipart(reqwest::multipart::Form),
    Json(serde_json::Value),
}

/// A 2xx answer.
#[derive(Debug)]
pub struct Reply {
    /// The `content-type` header, lower-cased.
    pub content_type: String,
    pub body: Vec<u8>,
}

/// A configured speech endpoint.
#[derive(Clone)]
pub struct SpeechEndpoint {
    client: reqwest::Client,
    base: String,
    headers: HeaderMap,
    redactor: Arc<Redactor>,
}

impl std::fmt::Debug for SpeechEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechEndpoint")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl SpeechEndpoint {
    /// An endpoint under `api_base` sending `key` (when set) and the `extra` headers.
    pub fn new(
        api_base: &str,
        key: Option<&Secret>,
        extra: &BTreeMap<String, Secret>,
    ) -> Result<Self, SpeechError> {
        let redactor = Arc::new(Redactor::new(key, extra));
        let mut headers = HeaderMap::new();
        for (name, value) in extra {
            insert_secret(&mut headers, name, value.expose())?;
        }
        if let Some(key) = key {
            insert_secret(
                &mut headers,
                AUTHORIZATION.as_str(),
                &format!("Bearer {}", key.expose()),
            )?;
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| SpeechError::Config(redactor.redact(&error_chain(&e))))?;
        Ok(Self {
            client,
            base: api_base.trim_end_matches('/').to_owned(),
            headers,
            redactor,
        })
    }

    /// Redacts `text` with this endpoint's secrets.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// POSTs `body` to `{api_base}{path}`; the whole exchange (answer included, at most `limit`
    /// bytes) must finish within `deadline` and stops at once when `cancel` fires.
    pub async fn post(
        &self,
        path: &str,
        body: Body,
        deadline: Duration,
        limit: usize,
        cancel: &CancellationToken,
    ) -> Result<Reply, SpeechError> {
        let exchange = self.exchange(path, body, deadline, limit);
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(SpeechError::Cancelled),
            r = tokio::time::timeout(deadline, exchange) => {
                r.unwrap_or(Err(SpeechError::TimedOut(deadline)))
            }
        }
    }

    async fn exchange(
        &self,
        path: &str,
        body: Body,
        deadline: Duration,
        limit: usize,
    ) -> Result<Reply, SpeechError> {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .headers(self.headers.clone());
        let request = match body {
            Body::Multipart(form) => request.multipart(form),
            Body::Json(value) => request.json(&value),
        };
        let mut response = request.send().await.map_err(|e| self.network(e))?;
        if !response.status().is_success() {
            let failure = HttpFailure::read(response, deadline, &self.redactor).await;
            return Err(SpeechError::Status {
                status: failure.status,
                message: failure.message,
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.network(e))? {
            if body.len() + chunk.len() > limit {
                return Err(SpeechError::BadResponse(format!(
                    "the answer is larger than {} MB",
                    limit / (1024 * 1024)
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply { content_type, body })
    }

    fn network(&self, e: reqwest::Error) -> SpeechError {
        SpeechError::Network(self.redactor.redact(&error_chain(&e.without_url())))
    }
}

fn insert_secret(headers: &mut HeaderMap, name: &str, value: &str) -> Result<(), SpeechError> {
    let invalid = |what: &str| SpeechError::Config(format!("invalid header {what} for `{name}`"));
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid("name"))?;
    let mut value = HeaderValue::from_str(value).map_err(|_| invalid("value"))?;
    value.set_sensitive(true);
    headers.insert(name, value);
    Ok(())
}
