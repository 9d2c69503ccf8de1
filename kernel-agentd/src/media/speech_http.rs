//! Speech requests (`[stt]`, `[tts]`) on the HTTP edge ([`crate::http::Endpoint`]): one POST
//! with the key as `Authorization: Bearer` and the configured headers (all marked sensitive),
//! under a deadline and the turn's cancellation token, with a bounded answer. Every error is
//! redacted (key, header values, credential patterns) and names no URL.

use std::collections::BTreeMap;
use std::time::Duration;

use kernel_common::Secret;
use reqwest::header::AUTHORIZATION;
use tokio_util::sync::CancellationToken;

use crate::http::{Endpoint, HttpFailure};

/// Why a speech request failed. Messages are redacted and meant for the owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SpeechError {
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
pub(crate) enum Body {
    Multipart(reqwest::multipart::Form),
    Json(serde_json::Value),
}

/// A 2xx answer.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The `content-type` header, lower-cased.
    pub content_type: String,
    pub body: Vec<u8>,
}

/// A speech endpoint under `api_base` on the shared `client`, sending `key` (when set) as
/// `Authorization: Bearer` and the `extra` headers.
pub(crate) fn endpoint(
    client: &reqwest::Client,
    api_base: &str,
    key: Option<&Secret>,
    extra: &BTreeMap<String, Secret>,
) -> Result<Endpoint, SpeechError> {
    let auth = key.map(|k| (AUTHORIZATION.as_str(), format!("Bearer {}", k.expose())));
    Endpoint::new(client, api_base, auth, key, extra)
        .map_err(|e| SpeechError::Config(e.to_string()))
}

/// POSTs `body` to `{api_base}{path}` on `endpoint`; the whole exchange (answer included, at
/// most `limit` bytes) must finish within `deadline` and stops at once when `cancel` fires.
pub(crate) async fn post(
    endpoint: &Endpoint,
    path: &str,
    body: Body,
    deadline: Duration,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Reply, SpeechError> {
    let exchange = exchange(endpoint, path, body, deadline, limit);
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(SpeechError::Cancelled),
        r = tokio::time::timeout(deadline, exchange) => {
            r.unwrap_or(Err(SpeechError::TimedOut(deadline)))
        }
    }
}

async fn exchange(
    endpoint: &Endpoint,
    path: &str,
    body: Body,
    deadline: Duration,
    limit: usize,
) -> Result<Reply, SpeechError> {
    let request = endpoint.post(path);
    let request = match body {
        Body::Multipart(form) => request.multipart(form),
        Body::Json(value) => request.json(&value),
    };
    let network = |e| SpeechError::Network(endpoint.network_message(e));
    let mut response = request.send().await.map_err(network)?;
    if !response.status().is_success() {
        let failure = HttpFailure::read(response, deadline, endpoint.redactor()).await;
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
    while let Some(chunk) = response.chunk().await.map_err(network)? {
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

    fn speech(base: &str) -> Endpoint {
        let headers = BTreeMap::from([("X-Org".to_owned(), Secret::new("org-header-value-77"))]);
        let client = crate::http::client().unwrap();
        endpoint(&client, base, Some(&Secret::new(KEY)), &headers).unwrap()
    }

    fn json() -> Body {
        Body::Json(serde_json::json!({"input": "hi"}))
    }

    #[tokio::test]
    async fn a_silent_endpoint_times_out() {
        let e = speech(&server(None).await);
        let deadline = Duration::from_millis(300);
        let r = post(
            &e,
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
        let e = speech(&server(None).await);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let r = post(
            &e,
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
        let e = speech(&server(Some(UNAUTHORIZED)).await);
        let err = post(
            &e,
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
        let e = speech(&server(Some(BIG)).await);
        let err = post(
            &e,
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
