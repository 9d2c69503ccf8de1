//! `FakeSpeech`: an OpenAI-compatible speech server on `127.0.0.1:0` for `[stt]` and `[tts]`.
//!
//! `POST /v1/audio/transcriptions` takes `multipart/form-data` with a `file` part (file name and
//! bytes) and a `model` field, and answers `{"text": …}`; `POST /v1/audio/speech` takes JSON
//! `{model, voice, input, response_format}` and answers Ogg bytes (starting `OggS`). Both check
//! `Authorization: Bearer <key>` and the request shape, answering 401/400 in OpenAI's error
//! shape when they are wrong. Every request is recorded; each endpoint can be told to fail, to
//! stall (until the fake is dropped) or to hold its answer until the test releases it.
//!
//! ```text
//! let speech = FakeSpeech::start("sk-speech-key").await;   // api_base = speech.base()
//! speech.set_transcript("明天提醒我开会");
//! speech.set_tts(Behaviour::Fail(500));
//! let reqs = speech.requests();
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::recorded::{Recorded, Recorder};

/// The Ogg audio the fake answers for speech by default.
pub const FAKE_OGG: &[u8] = b"OggS\x00\x02fake-opus-voice-reply";

/// How an endpoint answers a well-formed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// The normal answer (the transcript / [`FAKE_OGG`] or the bytes set).
    Answer,
    /// This HTTP status with an OpenAI-shaped error body.
    Fail(u16),
    /// The response never comes (until the fake is dropped).
    Stall,
    /// 200 with a body that is not what was asked for (HTML / not Ogg).
    Garbage,
    /// The normal answer, once [`FakeSpeech::release`] is called ([`FakeSpeech::holding`]
    /// resolves when a request is waiting).
    Hold,
}

/// One request the fake received: the HTTP request (method, path, headers and `header()`
/// through `Deref`) with what was parsed out of its body.
#[derive(Debug, Clone)]
pub struct SpeechRequest {
    pub http: Recorded,
    /// Transcriptions: the multipart fields other than the file (e.g. `model`).
    pub fields: Vec<(String, String)>,
    /// Transcriptions: the `file` part's file name, content type and bytes.
    pub file: Option<(String, String, Vec<u8>)>,
    /// Speech: the JSON body.
    pub json: Value,
}

impl std::ops::Deref for SpeechRequest {
    type Target = Recorded;

    fn deref(&self) -> &Recorded {
        &self.http
    }
}

impl SpeechRequest {
    /// The multipart field `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug)]
struct Shared {
    key: String,
    transcript: Mutex<String>,
    stt: Mutex<Behaviour>,
    tts: Mutex<Behaviour>,
    /// What speech answers ([`FAKE_OGG`] unless set).
    speech_audio: Mutex<Vec<u8>>,
    requests: Recorder<SpeechRequest>,
    shutdown: CancellationToken,
    /// Cancelled when a request starts stalling (tests wait on it).
    stalled: CancellationToken,
    /// Cancelled when a request starts holding (tests wait on it).
    held: CancellationToken,
    /// Cancelled by `release`: held requests answer.
    released: CancellationToken,
}

/// The fake server; see the module docs.
#[derive(Debug)]
pub struct FakeSpeech {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeSpeech {
    /// Binds `127.0.0.1:0`; requests must carry `Authorization: Bearer <key>`.
    pub async fn start(key: &str) -> FakeSpeech {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake speech");
        let addr = listener.local_addr().expect("fake speech address");
        let shared = Arc::new(Shared {
            key: key.to_owned(),
            transcript: Mutex::new("这是一段测试语音".to_owned()),
            stt: Mutex::new(Behaviour::Answer),
            tts: Mutex::new(Behaviour::Answer),
            speech_audio: Mutex::new(FAKE_OGG.to_vec()),
            requests: Recorder::default(),
            shutdown: CancellationToken::new(),
            stalled: CancellationToken::new(),
            held: CancellationToken::new(),
            released: CancellationToken::new(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "fake speech server stopped");
            }
        });
        FakeSpeech { addr, shared, task }
    }

    /// `http://127.0.0.1:<port>/v1`: the `api_base` of `[stt]` / `[tts]`.
    pub fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// What transcriptions answer from now on.
    pub fn set_transcript(&self, text: &str) {
        *self.shared.transcript.lock().unwrap() = text.to_owned();
    }

    /// How transcriptions answer from now on.
    pub fn set_stt(&self, b: Behaviour) {
        *self.shared.stt.lock().unwrap() = b;
    }

    /// The Ogg bytes speech answers from now on (they must start with `OggS`).
    pub fn set_speech_audio(&self, audio: Vec<u8>) {
        *self.shared.speech_audio.lock().unwrap() = audio;
    }

    /// How speech answers from now on.
    pub fn set_tts(&self, b: Behaviour) {
        *self.shared.tts.lock().unwrap() = b;
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<SpeechRequest> {
        self.shared.requests.all()
    }

    /// The requests to `path` (`/v1/audio/transcriptions`, `/v1/audio/speech`).
    pub fn requests_to(&self, path: &str) -> Vec<SpeechRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Resolves once a request is stalling.
    pub async fn stalling(&self) {
        self.shared.stalled.cancelled().await;
    }

    /// Resolves once a request is held ([`Behaviour::Hold`]).
    pub async fn holding(&self) {
        self.shared.held.cancelled().await;
    }

    /// Lets held requests — and any later [`Behaviour::Hold`] ones — answer normally.
    pub fn release(&self) {
        self.shared.released.cancel();
    }
}

impl Drop for FakeSpeech {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut request = SpeechRequest {
        http: Recorded::new(&method, &uri, &headers, body.clone()),
        fields: Vec::new(),
        file: None,
        json: Value::Null,
    };
    let checked = match (method == Method::POST, uri.path()) {
        (true, "/v1/audio/transcriptions") => check_transcription(&headers, &body, &mut request),
        (true, "/v1/audio/speech") => check_speech(&headers, &body, &mut request),
        _ => Err((404, "Not found".to_owned())),
    };
    let path = request.path.clone();
    shared.requests.push(request);
    if let Err((status, message)) = checked {
        return error(status, &message);
    }
    let sent = sent_key(&headers);
    if sent != shared.key {
        // Like OpenAI, the refusal quotes the key it got (the client must redact it).
        return error(401, &format!("Incorrect API key provided: {sent}."));
    }
    let speech = path.ends_with("/speech");
    let behaviour = if speech {
        shared.tts.lock().unwrap().clone()
    } else {
        shared.stt.lock().unwrap().clone()
    };
    if behaviour == Behaviour::Hold {
        shared.held.cancel();
        tokio::select! {
            () = shared.released.cancelled() => {}
            () = shared.shutdown.cancelled() => return error(503, "shutting down"),
        }
    }
    match behaviour {
        Behaviour::Answer | Behaviour::Hold if speech => (
            [(axum::http::header::CONTENT_TYPE, "audio/ogg")],
            shared.speech_audio.lock().unwrap().clone(),
        )
            .into_response(),
        Behaviour::Answer | Behaviour::Hold => {
            let text = shared.transcript.lock().unwrap().clone();
            axum::Json(json!({ "text": text })).into_response()
        }
        Behaviour::Fail(status) => {
            error(status, "The server had an error processing your request.")
        }
        Behaviour::Stall => {
            shared.stalled.cancel();
            shared.shutdown.cancelled().await;
            error(503, "shutting down")
        }
        Behaviour::Garbage => (
            [(axum::http::header::CONTENT_TYPE, "text/html")],
            "<html>maintenance</html>",
        )
            .into_response(),
    }
}

/// The bearer token sent (empty without one).
fn sent_key(headers: &HeaderMap) -> String {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned()
}

/// A multipart body with a non-empty `file` part (with a file name) and a `model` field.
fn check_transcription(
    headers: &HeaderMap,
    body: &[u8],
    request: &mut SpeechRequest,
) -> Result<(), (u16, String)> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .ok_or((
            400,
            format!("expected multipart/form-data, got {content_type:?}"),
        ))?;
    for part in parse_multipart(body, boundary.trim_matches('"')).map_err(|m| (400, m))? {
        match (part.name.as_str(), part.file_name) {
            ("file", Some(file_name)) => {
                request.file = Some((file_name, part.content_type, part.data));
            }
            ("file", None) => return Err((400, "the file part has no filename".into())),
            (name, _) => {
                let value = String::from_utf8(part.data)
                    .map_err(|_| (400, format!("field {name} is not UTF-8")))?;
                request.fields.push((name.to_owned(), value));
            }
        }
    }
    match &request.file {
        Some((_, _, data)) if !data.is_empty() => {}
        _ => return Err((400, "Missing required parameter: 'file'.".into())),
    }
    if request.field("model").is_none_or(str::is_empty) {
        return Err((400, "Missing required parameter: 'model'.".into()));
    }
    Ok(())
}

/// A JSON body `{model, voice, input, response_format: "opus"}`.
fn check_speech(
    headers: &HeaderMap,
    body: &[u8],
    request: &mut SpeechRequest,
) -> Result<(), (u16, String)> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !content_type.starts_with("application/json") {
        return Err((400, format!("expected JSON, got {content_type:?}")));
    }
    request.json = serde_json::from_slice(body).map_err(|_| (400, "invalid JSON".to_owned()))?;
    for key in ["model", "voice", "input"] {
        if request.json[key].as_str().is_none_or(str::is_empty) {
            return Err((400, format!("Missing required parameter: '{key}'.")));
        }
    }
    if request.json["response_format"] != "opus" {
        return Err((
            400,
            "this fake only answers response_format \"opus\"".into(),
        ));
    }
    Ok(())
}

/// One part of a multipart body.
struct MultipartPart {
    name: String,
    file_name: Option<String>,
    content_type: String,
    data: Vec<u8>,
}

/// A strict RFC 7578 reader: `--boundary CRLF headers CRLF CRLF data CRLF` … `--boundary--`.
fn parse_multipart(body: &[u8], boundary: &str) -> Result<Vec<MultipartPart>, String> {
    let delimiter = format!("--{boundary}");
    let mut rest = body
        .strip_prefix(delimiter.as_bytes())
        .ok_or("the body does not start with the boundary")?;
    let separator = format!("\r\n--{boundary}");
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("no CRLF after a boundary")?;
        let head_end = find(rest, b"\r\n\r\n").ok_or("a part has no header end")?;
        let head = std::str::from_utf8(&rest[..head_end]).map_err(|_| "non-UTF-8 part headers")?;
        let after = &rest[head_end + 4..];
        let data_end = find(after, separator.as_bytes()).ok_or("a part is not terminated")?;
        parts.push(part(head, after[..data_end].to_vec())?);
        rest = &after[data_end + separator.len()..];
    }
}

fn part(head: &str, data: Vec<u8>) -> Result<MultipartPart, String> {
    let mut name = None;
    let mut file_name = None;
    let mut content_type = String::new();
    for line in head.split("\r\n") {
        let (key, value) = line.split_once(':').ok_or("a malformed part header")?;
        match key.trim().to_ascii_lowercase().as_str() {
            "content-disposition" => {
                for param in value.split(';').map(str::trim) {
                    if let Some(v) = param.strip_prefix("name=") {
                        name = Some(v.trim_matches('"').to_owned());
                    } else if let Some(v) = param.strip_prefix("filename=") {
                        file_name = Some(v.trim_matches('"').to_owned());
                    }
                }
            }
            "content-type" => content_type = value.trim().to_owned(),
            _ => {}
        }
    }
    Ok(MultipartPart {
        name: name.ok_or("a part has no name")?,
        file_name,
        content_type,
        data,
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn error(status: u16, message: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body =
        json!({"error": {"message": message, "type": "invalid_request_error", "code": null}});
    (status, axum::Json(body)).into_response()
}
