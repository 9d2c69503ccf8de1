//! What the fake LLM answers: [`Script`]s queued per test, and their building blocks
//! ([`Reply`], [`FakeToolCall`], [`HttpError`], [`Release`]). Scripts are provider-neutral; the
//! fake renders each in the wire format of the endpoint that was called.

use std::sync::Arc;

use tokio::sync::Notify;

/// Text the fake answers when its queue is empty.
pub const DEFAULT_TEXT: &str = "This is the fake LLM's default answer.";

/// One scripted response, consumed by one request.
#[derive(Debug, Clone)]
pub enum Script {
    /// A normal answer: text streamed in small deltas, tool calls, thinking, usage.
    Reply(Reply),
    /// An HTTP error in the provider's real error JSON shape.
    Error(HttpError),
    /// Streams `text` (Anthropic: inside a started message), then an `error` event
    /// (Anthropic) or a `data: {"error":…}` chunk (OpenAI), then ends the body.
    MidStreamError { text: String, error: HttpError },
    /// Sends the response head (and a `ping` event / SSE comment when `ping`), then nothing
    /// more until the fake shuts down; the client must give up by itself.
    Stall { ping: bool },
    /// Streams `text`, then resets the connection (no terminating chunk).
    AbruptClose { text: String },
    /// Streams `text`, then ends the body cleanly without `message_stop` / `finish_reason` /
    /// `[DONE]`.
    Truncated { text: String },
    /// Sends exactly this body with this status and content type (for malformed streams and
    /// non-standard error shapes).
    Raw {
        status: u16,
        content_type: String,
        body: String,
        headers: Vec<(String, String)>,
    },
}

impl Script {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Script {
        Script::Reply(Reply::text(text))
    }

    /// One tool call with raw JSON `input` (may be `""` for empty input).
    pub fn tool_call(name: impl Into<String>, input: impl Into<String>) -> Script {
        Script::Reply(Reply::default().tool(FakeToolCall::new(name, input)))
    }

    /// A stall that sends a ping first.
    pub fn stall() -> Script {
        Script::Stall { ping: true }
    }

    /// A `text/event-stream` body sent verbatim with status 200.
    pub fn raw_sse(body: impl Into<String>) -> Script {
        Script::Raw {
            status: 200,
            content_type: "text/event-stream".into(),
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A raw error body with `status` (e.g. `{"error":"…"}` or plain text).
    pub fn raw_error(status: u16, body: impl Into<String>) -> Script {
        let content_type = "application/json".into();
        Script::Raw {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A text reply that pauses after its first text delta (non-streaming: before its body)
    /// until `release` is called (or the fake shuts down). Returns the script and its release
    /// handle.
    pub fn hold(text: impl Into<String>) -> (Script, Release) {
        let release = Release::default();
        (
            Script::Reply(Reply::text(text).hold(release.clone())),
            release,
        )
    }
}

impl From<Reply> for Script {
    fn from(reply: Reply) -> Script {
        Script::Reply(reply)
    }
}

impl From<HttpError> for Script {
    fn from(error: HttpError) -> Script {
        Script::Error(error)
    }
}

/// Token counts the fake reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeUsage {
    /// Uncached input tokens (OpenAI: `prompt_tokens` is this plus `cache_read`).
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    /// Anthropic `cache_creation_input_tokens` (OpenAI has none).
    pub cache_write: u64,
}

impl Default for FakeUsage {
    fn default() -> Self {
        Self {
            input: 12,
            output: 7,
            cache_read: 0,
            cache_write: 0,
        }
    }
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Thinking (Anthropic `thinking` block with `signature`; OpenAI `reasoning_content`).
    pub thinking: Option<(String, String)>,
    pub text: String,
    pub tool_calls: Vec<FakeToolCall>,
    pub usage: FakeUsage,
    /// Characters per text delta (default 3).
    pub chunk_chars: usize,
    /// Anthropic `stop_reason` / OpenAI `finish_reason` override.
    pub stop_reason: Option<String>,
    /// Pause after the first text delta (non-streaming: before the body) until released.
    pub hold: Option<Release>,
    /// Pause after every text delta (Anthropic): a slowly streaming model.
    pub delta_pause: Option<std::time::Duration>,
    /// OpenAI-compatible server quirks.
    pub quirks: Quirks,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            thinking: None,
            text: String::new(),
            tool_calls: Vec::new(),
            usage: FakeUsage::default(),
            chunk_chars: 3,
            stop_reason: None,
            hold: None,
            delta_pause: None,
            quirks: Quirks::default(),
        }
    }
}

impl Reply {
    /// A reply with `text`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            ..Reply::default()
        }
    }

    /// Adds a tool call.
    pub fn tool(mut self, call: FakeToolCall) -> Reply {
        self.tool_calls.push(call);
        self
    }

    /// Adds thinking with its signature.
    pub fn thinking(mut self, thinking: impl Into<String>, signature: impl Into<String>) -> Reply {
        self.thinking = Some((thinking.into(), signature.into()));
        self
    }

    /// Sets the reported usage.
    pub fn usage(mut self, usage: FakeUsage) -> Reply {
        self.usage = usage;
        self
    }

    /// Overrides the stop / finish reason (e.g. `"max_tokens"`, `"length"`, `"stop"`).
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Reply {
        self.stop_reason = Some(reason.into());
        self
    }

    /// Pauses after the first text delta until `release` fires.
    pub fn hold(mut self, release: Release) -> Reply {
        self.hold = Some(release);
        self
    }

    /// Streams slowly (Anthropic): `pause` after every text delta of `chunk_chars` characters.
    pub fn slow(mut self, chunk_chars: usize, pause: std::time::Duration) -> Reply {
        self.chunk_chars = chunk_chars.max(1);
        self.delta_pause = Some(pause);
        self
    }

    /// Sets OpenAI-compatible quirks.
    pub fn quirks(mut self, quirks: Quirks) -> Reply {
        self.quirks = quirks;
        self
    }
}

/// Ways real OpenAI-compatible servers deviate from OpenAI's own stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quirks {
    /// Never send `data: [DONE]` (the body just ends after the finish chunk).
    pub no_done: bool,
    /// Never send usage, even when `stream_options.include_usage` asked for it.
    pub no_usage: bool,
    /// Send a chunk with `"choices": []` before the first delta.
    pub empty_choices_chunk: bool,
    /// Send usage inside the finish chunk instead of a separate last chunk.
    pub usage_in_finish_chunk: bool,
}

/// A scripted tool call.
#[derive(Debug, Clone)]
pub struct FakeToolCall {
    /// `None`: the fake makes one up (`toolu_fake_<n>` / `call_fake_<n>`).
    pub id: Option<String>,
    pub name: String,
    /// The raw JSON input; `""` sends no input deltas at all (empty input).
    pub input: String,
    /// How many pieces the input is streamed in (default 4).
    pub pieces: usize,
}

impl FakeToolCall {
    /// A call of `name` with raw JSON `input`.
    pub fn new(name: impl Into<String>, input: impl Into<String>) -> FakeToolCall {
        FakeToolCall {
            id: None,
            name: name.into(),
            input: input.into(),
            pieces: 4,
        }
    }

    /// Sets the call id.
    pub fn id(mut self, id: impl Into<String>) -> FakeToolCall {
        self.id = Some(id.into());
        self
    }

    /// Streams the input in `pieces` pieces.
    pub fn pieces(mut self, pieces: usize) -> FakeToolCall {
        self.pieces = pieces.max(1);
        self
    }
}

/// A scripted HTTP error, rendered in each provider's real error shape.
#[derive(Debug, Clone)]
pub struct HttpError {
    pub kind: ErrorKind,
    /// Overrides the provider's usual message.
    pub message: Option<String>,
}

/// The error classes the fake can answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 401; the message echoes the key the client sent (like some servers do), so tests can
    /// check that the client redacts it.
    Unauthorized,
    /// 403.
    Forbidden,
    /// 400 invalid request.
    BadRequest,
    /// 400 "prompt is too long" / `context_length_exceeded`.
    PromptTooLong,
    /// 429 with `retry-after` seconds.
    RateLimited { retry_after: u64 },
    /// 500.
    Internal,
    /// Anthropic 529 `overloaded_error`; OpenAI 503.
    Overloaded,
    /// 404.
    NotFound,
}

impl HttpError {
    /// An error of `kind` with the provider's usual message.
    pub fn new(kind: ErrorKind) -> HttpError {
        HttpError {
            kind,
            message: None,
        }
    }

    /// Overrides the message.
    pub fn message(mut self, message: impl Into<String>) -> HttpError {
        self.message = Some(message.into());
        self
    }
}

/// Releases a held reply (see [`Script::hold`]). Releasing before the fake reaches the hold
/// point is remembered.
#[derive(Debug, Clone, Default)]
pub struct Release(pub(crate) Arc<Notify>);

impl Release {
    /// Lets the held reply continue.
    pub fn release(&self) {
        self.0.notify_one();
    }
}

/// `s` split into `n` pieces of about equal size (at char boundaries).
pub(crate) fn split_pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// `s` split into pieces of at most `size` chars.
pub(crate) fn split_chunks(s: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}
