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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    const KEY: &str = "sk-speech-unit-key-0123456789";

    /// A server on 127.0.0.1 that reads each request, then answers it with `answer` (raw
    /// HTTP), or never when `answer` is `None`.
    async fn server(answer: Option<&'static str>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                if let Some(answer) = answer {
                    read_request(&mut socket).await;
                    let _ = socket.write_all(answer.as_bytes()).await;
                }
                held.push(socket);
            }
        });
        format!("http://{addr}/v1")
    }

    /// Reads one request's head and its `content-length` body.
    async fn read_request(socket: &mut tokio::net::TcpStream) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let Ok(n) = socket.read(&mut chunk).await else {
                return;
            };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    return;
                }
            }
        }
    }

    fn endpoint(base: &str) -> SpeechEndpoint {
        let headers = BTreeMap::from([("X-Org".to_owned(), Secret::new("org-header-value-77"))]);
        SpeechEndpoint::new(base, Some(&Secret::new(KEY)), &headers).unwrap()
    }

    fn json() -> Body {
        Body::Json(serde_json::json!({"input": "hi"}))
    }

    #[tokio::test]
    async fn a_silent_endpoint_times_out() {
        let e = endpoint(&server(None).await);
        let deadline = Duration::from_millis(300);
        let r = e
            .post(
                "/audio/speech",
                json(),
                deadline,
                1024,
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(r.unwrap_err(), SpeechError::TimedOut(deadline));
    }

    #[tokio::test]
    async fn cancellation_stops_the_request_at_once() {
        let e = endpoint(&server(None).await);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let r = e
            .post(
                "/audio/speech",
                json(),
                Duration::from_secs(600),
                1024,
                &cancel,
            )
            .await;
        assert_eq!(r.unwrap_err(), SpeechError::Cancelled);
    }

    #[tokio::test]
    async fn error_answers_are_redacted_and_big_answers_refused() {
        const UNAUTHORIZED: &str = "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\
            content-length: 101\r\nconnection: close\r\n\r\n\
            {\"error\":{\"message\":\"Incorrect API key provided: sk-speech-unit-key-0123456789 org-header-value-77\"}}";
        let e = endpoint(&server(Some(UNAUTHORIZED)).await);
        let err = e
            .post(
                "/audio/speech",
                json(),
                Duration::from_secs(10),
                1024,
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        let SpeechError::Status { status, message } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(*status, 401);
        assert!(
            !message.contains(KEY) && !message.contains("org-header-value-77"),
            "{message}"
        );
        assert!(
            message.starts_with("Incorrect API key provided: sk-s…6789"),
            "{message}"
        );

        const BIG: &str = "HTTP/1.1 200 OK\r\ncontent-type: audio/ogg\r\ncontent-length: 20\r\n\
            connection: close\r\n\r\nOggS0123456789abcdef";
        let e = endpoint(&server(Some(BIG)).await);
        let err = e
            .post(
                "/audio/speech",
                json(),
                Duration::from_secs(10),
                8,
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, SpeechError::BadResponse(_)), "{err:?}");
    }
}
