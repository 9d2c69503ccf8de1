//! `FakeEmbeddings`: a deterministic OpenAI-compatible embeddings server on `127.0.0.1:0`.
//!
//! `POST /v1/embeddings` takes `{model, input: string | [string], encoding_format?,
//! dimensions?, input_type?}` with `Authorization: Bearer <key>` and answers
//! `{"object":"list","data":[{"object":"embedding","index","embedding":[…]}],"model","usage"}`
//! ([`DIM`] components, or `dimensions` when asked: [`embed_in`]) (400/401 in OpenAI's error shape when the request is wrong). Vectors ([`DIM`] components) are
//! made by meaning, not by words: every word of a small bilingual concept table ([`CONCEPTS`])
//! adds its concept's direction, so "哪些坚果我不能吃" lands near "妈妈对花生过敏" and "who is
//! my boss" near "我的领导是老王"; other words add a small hashed direction. The fake can be told
//! to fail, stall or answer garbage, and records every request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::recorded::{Recorded, Recorder};

/// The vectors' dimension.
pub const DIM: usize = 64;

/// Concepts and the words (Chinese or English, lower-case) that mean them.
pub const CONCEPTS: &[&[&str]] = &[
    &["花生", "坚果", "过敏", "peanut", "nut", "allerg"],
    &["领导", "老板", "上司", "boss", "manager"],
    &["猫", "宠物", "狗", "pet", "cat", "dog"],
    &["咖啡", "coffee", "拿铁", "latte"],
    &["餐厅", "饭店", "restaurant", "吃饭", "dinner"],
    &["生日", "birthday"],
    &["妈妈", "母亲", "mother", "mom"],
    &["车", "汽车", "car", "开车"],
];

/// How the endpoint answers a well-formed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// Vectors.
    Answer,
    /// This HTTP status with an OpenAI-shaped error body.
    Fail(u16),
    /// The response never comes (until the fake is dropped).
    Stall,
    /// 200 with JSON that has no usable vectors.
    Garbage,
}

/// One request: the HTTP request with its JSON body.
#[derive(Debug, Clone)]
pub struct EmbeddingsRequest {
    pub http: Recorded,
    pub json: Value,
}

impl EmbeddingsRequest {
    /// The texts asked for.
    pub fn inputs(&self) -> Vec<String> {
        match &self.json["input"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(xs) => xs
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug)]
struct Shared {
    key: String,
    behaviour: Mutex<Behaviour>,
    requests: Recorder<EmbeddingsRequest>,
    shutdown: CancellationToken,
}

/// The fake server; see the module docs.
#[derive(Debug)]
pub struct FakeEmbeddings {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeEmbeddings {
    /// Binds `127.0.0.1:0`; requests must carry `Authorization: Bearer <key>`.
    pub async fn start(key: &str) -> FakeEmbeddings {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake embeddings");
        let addr = listener.local_addr().expect("fake embeddings address");
        let shared = Arc::new(Shared {
            key: key.to_owned(),
            behaviour: Mutex::new(Behaviour::Answer),
            requests: Recorder::default(),
            shutdown: CancellationToken::new(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "fake embeddings server stopped");
            }
        });
        FakeEmbeddings { addr, shared, task }
    }

    /// `http://127.0.0.1:<port>/v1`: the `api_base` of `[embeddings]`.
    pub fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// How the endpoint answers from now on.
    pub fn set(&self, b: Behaviour) {
        *self.shared.behaviour.lock().unwrap() = b;
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<EmbeddingsRequest> {
        self.shared.requests.all()
    }

    /// The `[embeddings]` table for this fake (model `fake-embed`).
    pub fn config(&self, key: &str) -> String {
        format!(
            "[embeddings]\napi_base = \"{}\"\napi_key = \"{key}\"\nmodel = \"fake-embed\"\n",
            self.base()
        )
    }
}

impl Drop for FakeEmbeddings {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
        self.task.abort();
    }
}

/// The fake's vector for `text` (normalised).
pub fn embed(text: &str) -> Vec<f32> {
    let lower = text.to_lowercase();
    let mut v = vec![0.0f32; DIM];
    for (c, words) in CONCEPTS.iter().enumerate() {
        if words.iter().any(|w| lower.contains(w)) {
            v[c] += 1.0;
        }
    }
    for word in lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = word.bytes().fold(2_166_136_261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16_777_619)
        });
        v[CONCEPTS.len() + (h as usize % (DIM - CONCEPTS.len()))] += 0.2;
    }
    // A shared component, so that unrelated texts are not orthogonal (like real models).
    v[DIM - 1] += 0.3;
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

/// [`embed`] in `dims` components (a request's `dimensions`): its components repeated and
/// normalised again, so that closeness is kept.
pub fn embed_in(text: &str, dims: usize) -> Vec<f32> {
    let base = embed(text);
    let v: Vec<f32> = (0..dims.max(1)).map(|i| base[i % DIM]).collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::EPSILON);
    v.iter().map(|x| x / norm).collect()
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let request = EmbeddingsRequest {
        http: Recorded::new(&method, &uri, &headers, body),
        json: json.clone(),
    };
    shared.requests.push(request.clone());
    if method != Method::POST || uri.path() != "/v1/embeddings" {
        return error(404, "Not found");
    }
    let sent = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if sent != shared.key {
        return error(401, &format!("Incorrect API key provided: {sent}."));
    }
    if let Err(message) = check(&json) {
        return error(400, &message);
    }
    let behaviour = shared.behaviour.lock().unwrap().clone();
    match behaviour {
        Behaviour::Answer => {
            let data: Vec<Value> = request
                .inputs()
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let v = match json["dimensions"].as_u64() {
                        Some(d) => embed_in(t, d as usize),
                        None => embed(t),
                    };
                    json!({"object": "embedding", "index": i, "embedding": v})
                })
                .collect();
            axum::Json(json!({
                "object": "list",
                "data": data,
                "model": json["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }))
            .into_response()
        }
        Behaviour::Fail(status) => {
            error(status, "The server had an error processing your request.")
        }
        Behaviour::Stall => {
            shared.shutdown.cancelled().await;
            error(503, "shutting down")
        }
        Behaviour::Garbage => {
            axum::Json(json!({"object": "list", "data": [{"embedding": "?!"}]})).into_response()
        }
    }
}

/// `model` a non-empty string; `input` a non-empty string or array of non-empty strings;
/// `encoding_format` `float`/`base64` when given.
fn check(json: &Value) -> Result<(), String> {
    if json["model"].as_str().is_none_or(str::is_empty) {
        return Err("you must provide a model parameter".into());
    }
    let ok = match &json["input"] {
        Value::String(s) => !s.is_empty(),
        Value::Array(xs) => {
            !xs.is_empty() && xs.iter().all(|x| x.as_str().is_some_and(|s| !s.is_empty()))
        }
        _ => false,
    };
    if !ok {
        return Err("'input' must be a non-empty string or array of non-empty strings".into());
    }
    match json.get("encoding_format").and_then(Value::as_str) {
        None | Some("float") | Some("base64") => Ok(()),
        Some(other) => Err(format!("unknown encoding_format {other:?}")),
    }
}

fn error(status: u16, message: &str) -> Response {
    let status = axum::http::StatusCode::from_u16(status)
        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        axum::Json(
            json!({"error": {"message": message, "type": "invalid_request_error", "code": null}}),
        ),
    )
        .into_response()
}
