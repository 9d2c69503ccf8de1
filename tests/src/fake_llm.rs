//! `FakeLlm`: a scripted LLM server on `127.0.0.1:0` that speaks both Anthropic Messages
//! (`POST /v1/messages`) and OpenAI chat completions (`POST /v1/chat/completions` and
//! `/chat/completions`), streaming and non-streaming, exactly in the documented wire formats,
//! and streamed OpenAI Responses (`POST /v1/responses`, Codex's wire API; `fake_llm::responses`).
//!
//! ```text
//! let fake = FakeLlm::start().await;
//! fake.push(Script::text("hello"));                       // next call streams "hello"
//! fake.push(Script::tool_call("get_time", r#"{"tz":"UTC"}"#));
//! // claude: api_base = fake.url(); openai_compat: api_base = fake.openai_base()
//! let reqs = fake.requests();                             // what the client sent
//! ```
//!
//! Each request consumes the next queued [`Script`] (an empty queue answers [`DEFAULT_TEXT`]).
//! Every request is recorded ([`FakeLlm::requests`]). In strict mode (the default) requests are
//! validated like the real APIs do (tool_use/tool_result pairing, role alternation, tool names,
//! `max_tokens`, auth headers, extended thinking and its round trip in `fake_llm::thinking`, …);
//! a failure is answered with a 400/401 in the provider's real
//! error shape and does not consume a script. Dropping the fake ends stalled and held streams.

mod anthropic;
mod body;
mod cache;
mod openai;
mod provider;
mod responses;
mod script;
mod thinking;
mod validate;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::recorded::{Recorded, Recorder};

pub use crate::log_capture::LogCapture;
pub use cache::estimate_tokens;
pub use provider::{Drained, FAKE_KEY, FAKE_MODEL, drain};
pub use script::{
    DEFAULT_TEXT, ErrorKind, FakeToolCall, FakeUsage, HttpError, Quirks, Release, Reply, Script,
};

/// One request the fake received: the HTTP request (method, path, headers and `header()`
/// through `Deref`) with its body as JSON and as text.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub http: Recorded,
    /// The body parsed as JSON (`Null` if it was not JSON).
    pub body: Value,
    /// The body exactly as received (lossily decoded as UTF-8).
    pub raw_body: String,
}

impl std::ops::Deref for RecordedRequest {
    type Target = Recorded;

    fn deref(&self) -> &Recorded {
        &self.http
    }
}

impl RecordedRequest {
    /// The raw body from its start through element `k - 1` of the top-level `messages` array
    /// (through `"messages":[` when `k` is 0): the bytes a prompt cache can reuse when the
    /// caller's stable prefix is `k`. Panics when the body has fewer than `k` messages.
    pub fn messages_prefix(&self, k: usize) -> &str {
        let raw = self.raw_body.as_str();
        let key = "\"messages\":[";
        let start = raw.find(key).expect("a messages array") + key.len();
        if k == 0 {
            return &raw[..start];
        }
        let (mut depth, mut in_string, mut escaped, mut seen) = (0usize, false, false, 0usize);
        for (i, c) in raw[start..].char_indices() {
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' | '[' => depth += 1,
                ']' if depth == 0 => break,
                '}' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        seen += 1;
                        if seen == k {
                            return &raw[..start + i + 1];
                        }
                    }
                }
                _ => {}
            }
        }
        panic!("fewer than {k} messages in {raw}");
    }

    /// Whether the body asked for streaming.
    pub fn is_stream(&self) -> bool {
        self.body
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// What a renderer needs to know about the call it answers.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub model: String,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
    /// The key the client sent (echoed by 401 messages so tests can check redaction).
    pub key: String,
    /// The request's sequence number (for ids).
    pub seq: u64,
    pub shutdown: CancellationToken,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<VecDeque<Script>>,
    requests: Recorder<RecordedRequest>,
    lax: AtomicBool,
    seq: AtomicU64,
    shutdown: CancellationToken,
    /// When each request arrived and its response body ended (same order as `requests`).
    served: Mutex<Vec<Served>>,
    /// The prompt-cache model, when on; and the usage it reported, per Anthropic reply.
    cache: Mutex<Option<cache::PromptCache>>,
    billed: Mutex<Vec<FakeUsage>>,
    /// The context limit, when on: requests estimated over it are refused (see
    /// [`FakeLlm::limit_context`]); with the estimate of every request and whether it was refused.
    limit: Mutex<Option<u64>>,
    sizes: Mutex<Vec<(u64, bool)>>,
    /// The Anthropic thinking blocks streamed so far (signature → thinking text).
    thinking: Mutex<thinking::Issued>,
}

/// When the fake received a request and when it finished sending the response body
/// (`None` while streaming, or when the body ended in a reset or stall).
#[derive(Debug, Clone, Copy)]
pub struct Served {
    pub received: std::time::Instant,
    pub finished: Option<std::time::Instant>,
    /// When the response body was dropped before it ended (the client closed the stream, or
    /// the fake shut down a stalled or held one).
    pub dropped: Option<std::time::Instant>,
}

/// The fake server; see the module docs.
#[derive(Debug)]
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeLlm {
    /// Binds `127.0.0.1:0` and serves until dropped. Request bodies over 2 MB are refused with
    /// a 413, as many gateways do (axum's default limit).
    pub async fn start() -> FakeLlm {
        Self::start_with_body_limit(2 * 1024 * 1024).await
    }

    /// [`FakeLlm::start`] taking request bodies up to `limit` bytes (a provider's own API takes
    /// tens of MB: several images).
    pub async fn start_with_body_limit(limit: usize) -> FakeLlm {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake LLM");
        let addr = listener.local_addr().expect("fake LLM address");
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .fallback(handle)
            .layer(axum::extract::DefaultBodyLimit::max(limit))
            .with_state(shared.clone());
        // No Nagle: streamed frames go out at once, as from a real API (otherwise delayed ACKs
        // add ~40 ms stalls that are the fake's, not the client's).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "fake LLM server stopped");
            }
        });
        FakeLlm { addr, shared, task }
    }

    /// `http://127.0.0.1:<port>`: the `api_base` of a `claude` provider.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:<port>/v1`: the `api_base` of an `openai_compat` provider.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Queues a script for the next request.
    pub fn push(&self, script: impl Into<Script>) {
        self.shared.queue.lock().unwrap().push_back(script.into());
    }

    /// Drops the scripts no request took (a turn cut off before its model call leaves its
    /// script queued, and the next request would take it); returns how many.
    pub fn clear(&self) -> usize {
        let mut queue = self.shared.queue.lock().unwrap();
        let n = queue.len();
        queue.clear();
        n
    }

    /// How many scripts are still queued.
    pub fn pending(&self) -> usize {
        self.shared.queue.lock().unwrap().len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.all()
    }

    /// Waits until at least `n` requests were received; panics after `timeout`.
    pub async fn wait_requests(&self, n: usize, timeout: std::time::Duration) {
        if !self.shared.requests.wait_for(n, timeout).await {
            panic!("the fake LLM did not get {n} request(s) within {timeout:?}");
        }
    }

    /// The most recent request.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.shared.requests.last()
    }

    /// Turns strict validation on (default) or off.
    pub fn set_strict(&self, strict: bool) {
        self.shared.lax.store(!strict, Ordering::SeqCst);
    }

    /// Arrival and end times of every request so far, in order (the fake's own time per call).
    pub fn served(&self) -> Vec<Served> {
        self.shared.served.lock().unwrap().clone()
    }

    /// Turns the prompt-cache model on (see `fake_llm/cache.rs`): Anthropic replies then report
    /// the model's `input_tokens`, `cache_read_input_tokens` and `cache_creation_input_tokens`
    /// instead of the scripted ones.
    pub fn model_prompt_cache(&self) {
        *self.shared.cache.lock().unwrap() = Some(cache::PromptCache::default());
    }

    /// The usage the prompt-cache model reported, one per Anthropic reply, in order.
    pub fn billed(&self) -> Vec<FakeUsage> {
        self.shared.billed.lock().unwrap().clone()
    }

    /// Turns on a context window of `tokens` (estimated as body bytes / 4, rounded up): a
    /// request over it is refused with the provider's real "prompt is too long" /
    /// `context_length_exceeded` 400 (without consuming a script), and a reply whose scripted
    /// usage has no input reports the request's estimate as its input tokens.
    pub fn limit_context(&self, tokens: u64) {
        *self.shared.limit.lock().unwrap() = Some(tokens);
    }

    /// Under [`FakeLlm::limit_context`]: every model request's estimated tokens and whether it
    /// was refused as over the limit, in order.
    pub fn request_sizes(&self) -> Vec<(u64, bool)> {
        self.shared.sizes.lock().unwrap().clone()
    }

    /// Ends every stalled or held stream now (as dropping the fake does).
    pub fn shutdown(&self) {
        self.shared.shutdown.cancel();
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
        self.task.abort();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Anthropic,
    OpenAi,
    Responses,
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let received = std::time::Instant::now();
    let http = Recorded::new(&method, &uri, &headers, body);
    let raw_body = String::from_utf8_lossy(&http.bytes).into_owned();
    let json: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let recorded = RecordedRequest {
        http,
        body: json.clone(),
        raw_body: raw_body.clone(),
    };
    let index = {
        // Both logs in the same order: `served[i]` is `requests[i]`.
        let mut served = shared.served.lock().unwrap();
        served.push(Served {
            received,
            finished: None,
            dropped: None,
        });
        shared.requests.push(recorded)
    };
    let response = answer(&shared, &method, &uri, &headers, json, &raw_body);
    timed(response, shared, index)
}

/// Marks request `index` dropped when its response body goes away before it ended.
struct DropWatch {
    shared: Arc<Shared>,
    index: usize,
}

impl Drop for DropWatch {
    fn drop(&mut self) {
        let mut served = self
            .shared
            .served
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(s) = served.get_mut(self.index)
            && s.finished.is_none()
        {
            s.dropped = Some(std::time::Instant::now());
        }
    }
}

/// Marks request `index` finished when `response`'s body ends cleanly, dropped when it goes
/// away before that.
fn timed(response: Response, shared: Arc<Shared>, index: usize) -> Response {
    use futures::StreamExt as _;
    let (parts, body) = response.into_parts();
    let watch = DropWatch {
        shared: shared.clone(),
        index,
    };
    let end = futures::stream::once(async move {
        if let Some(s) = shared.served.lock().unwrap().get_mut(index) {
            s.finished = Some(std::time::Instant::now());
        }
        None::<Result<Bytes, axum::Error>>
    })
    .filter_map(futures::future::ready);
    let body = body.into_data_stream().chain(end).map(move |chunk| {
        let _ = &watch;
        chunk
    });
    let body = axum::body::Body::from_stream(body);
    Response::from_parts(parts, body)
}

/// The answer to a recorded request.
fn answer(
    shared: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    json: Value,
    raw_body: &str,
) -> Response {
    let api = match (method == Method::POST, uri.path()) {
        (true, "/v1/messages") => Api::Anthropic,
        (true, "/v1/chat/completions" | "/chat/completions") => Api::OpenAi,
        (true, "/v1/responses" | "/responses") => Api::Responses,
        _ => {
            return raw(
                404,
                "application/json",
                r#"{"error":{"message":"Not found","type":"invalid_request_error"}}"#.into(),
                &[],
            );
        }
    };
    if json.is_null() {
        return reject(
            api,
            validate::Rejection {
                status: 400,
                kind: "invalid_request_error",
                message: "There was an error parsing the body".into(),
            },
        );
    }
    if !shared.lax.load(Ordering::SeqCst) {
        let checked = match api {
            Api::Anthropic => validate::anthropic(headers, &json)
                .and_then(|()| thinking::check(&json, &shared.thinking.lock().unwrap())),
            Api::OpenAi => validate::openai(headers, &json),
            Api::Responses => responses::validate(headers, &json),
        };
        if let Err(rejection) = checked {
            tracing::warn!(message = %rejection.message, "fake LLM rejected a request");
            return reject(api, rejection);
        }
    }
    let limit = *shared.limit.lock().unwrap();
    let size = estimate_tokens(raw_body.len());
    if let Some(limit) = limit {
        let over = size > limit;
        shared.sizes.lock().unwrap().push((size, over));
        if over {
            let message = match api {
                Api::Anthropic => format!("prompt is too long: {size} tokens > {limit} maximum"),
                Api::OpenAi | Api::Responses => format!(
                    "This model's maximum context length is {limit} tokens. However, your messages resulted in {size} tokens. Please reduce the length of the messages."
                ),
            };
            let error = Script::Error(HttpError {
                kind: ErrorKind::PromptTooLong,
                message: Some(message),
            });
            let call = call_of(shared, &json, headers);
            return match api {
                Api::Anthropic => anthropic::render(error, &call),
                Api::OpenAi => openai::render(error, &call),
                Api::Responses => responses::render(error, &call),
            };
        }
    }
    let mut script = shared
        .queue
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Script::text(DEFAULT_TEXT));
    if let (Some(_), Script::Reply(reply)) = (limit, &mut script)
        && reply.usage.input == 0
    {
        reply.usage.input = size;
    }
    if let (Api::Anthropic, Script::Reply(reply)) = (api, &mut script)
        && let Some(cache) = shared.cache.lock().unwrap().as_mut()
    {
        reply.usage = cache.account(raw_body, reply.usage);
        shared.billed.lock().unwrap().push(reply.usage);
    }
    if let (Api::Anthropic, Script::Reply(reply)) = (api, &script)
        && let Some((text, signature)) = &reply.thinking
    {
        let mut issued = shared.thinking.lock().unwrap();
        issued.insert(signature.clone(), text.clone());
    }
    let call = call_of(shared, &json, headers);
    match api {
        Api::Anthropic => anthropic::render(script, &call),
        Api::OpenAi => openai::render(script, &call),
        Api::Responses => responses::render(script, &call),
    }
}

/// What the renderers need to know about a request.
fn call_of(shared: &Shared, json: &Value, headers: &HeaderMap) -> Call {
    Call {
        model: json
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        stream: json.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: json
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        key: sent_key(headers),
        seq: shared.seq.fetch_add(1, Ordering::SeqCst),
        shutdown: shared.shutdown.clone(),
    }
}

fn sent_key(headers: &HeaderMap) -> String {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    get("x-api-key")
        .or_else(|| get("authorization").map(|a| a.trim_start_matches("Bearer ").to_owned()))
        .unwrap_or_default()
}

fn reject(api: Api, r: validate::Rejection) -> Response {
    match api {
        Api::Anthropic => anthropic::json_error(r.status, r.kind, &r.message, &[]),
        Api::OpenAi | Api::Responses => openai::json_error(r.status, &r.message),
    }
}

/// A complete response with exactly `body`.
pub(crate) fn raw(
    status: u16,
    content_type: &str,
    body: String,
    headers: &[(String, String)],
) -> Response {
    let mut response = body::stream_response(
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        content_type,
        vec![body::Frame::Data(body)],
        CancellationToken::new(),
    );
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}
