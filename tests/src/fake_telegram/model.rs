//! The fake Bot API's public records: the call log ([`Call`]), what the owner sees
//! ([`SentMessage`]), and the failures a test can inject ([`Failure`]).

use std::sync::Arc;

use serde_json::Value;

/// One request the fake received, with its outcome.
#[derive(Debug, Clone)]
pub struct Call {
    /// The Bot API method in lower case (`"sendmessage"`), or [`DOWNLOAD`] for a file download.
    pub method: String,
    /// The JSON body; for multipart: text fields as strings and each uploaded file (under the
    /// field that referenced it, `attach://` resolved) as `{"file_name": …, "len": n}`. For a
    /// download: `{"file_path": …}`.
    pub params: Value,
    pub ok: bool,
    pub error_code: Option<u16>,
    /// The error's description (`"Bad Request: message is too long"`).
    pub description: Option<String>,
    /// The `result` of a successful call (the sent `Message`, `true`, the updates…).
    pub result: Option<Value>,
    /// Whether the outcome was an injected [`Failure`].
    pub injected: bool,
    /// When the fake answered it.
    pub at: std::time::Instant,
}

/// The method name a file download is logged under (and can be injected with).
pub const DOWNLOAD: &str = "download";

impl Call {
    /// The string parameter `key`.
    pub fn str_param(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(Value::as_str)
    }

    /// The integer parameter `key` (a JSON number or, in multipart bodies, a numeric string).
    pub fn int_param(&self, key: &str) -> Option<i64> {
        super::params::int(&self.params, key)
    }

    /// `chat_id` as a number.
    pub fn chat_id(&self) -> Option<i64> {
        self.int_param("chat_id")
    }

    /// `text` (sendMessage, editMessageText).
    pub fn text(&self) -> Option<&str> {
        self.str_param("text")
    }

    /// The `message_id` of the message this call sent or edited, from its result.
    pub fn sent_message_id(&self) -> Option<i64> {
        self.result.as_ref()?.get("message_id")?.as_i64()
    }

    /// One line for failure messages: method, outcome, parameters (long values cut).
    pub fn summary(&self) -> String {
        let outcome = match (&self.description, self.ok) {
            (_, true) => "ok".to_owned(),
            (Some(d), false) if self.injected => format!("injected {d:?}"),
            (Some(d), false) => format!("error {d:?}"),
            (None, false) => "error".to_owned(),
        };
        let mut params = self.params.to_string();
        if params.len() > 300 {
            let cut = params.floor_char_boundary(300);
            params.truncate(cut);
            params.push('…');
        }
        format!("{} → {outcome} {params}", self.method)
    }
}

/// A message the bot sent, as the chat shows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    pub message_id: i64,
    /// The text (or, for a voice message, the caption) as last sent or edited, markup included.
    pub text: String,
    pub parse_mode: Option<String>,
    /// The message this one replies to.
    pub reply_to: Option<i64>,
    pub deleted: bool,
    /// How many successful `editMessageText` calls changed it.
    pub edit_count: u32,
    /// The uploaded bytes of a voice message.
    pub voice: Option<Vec<u8>>,
    /// The topic it was sent in (`message_thread_id`), `None` in the main chat.
    pub thread_id: Option<i64>,
}

/// A failure to answer instead of performing the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// 429 `Too Many Requests: retry after N` with `parameters.retry_after`.
    RetryAfter(u32),
    /// 400 `Bad Request: <this text>`.
    BadRequest(String),
    /// 500 `Internal Server Error`. Note: teloxide sleeps 10 s before reading a 5xx answer.
    ServerError,
    /// Any other Bot API error, e.g. `Api { code: 403, description: "Forbidden: bot was
    /// blocked by the user".into() }`.
    Api { code: u16, description: String },
    /// The connection breaks mid-answer (teloxide reports `RequestError::Network`).
    Disconnect,
    /// A proxy's HTML error page with this status (e.g. 502, 503) instead of the Bot API's JSON
    /// (teloxide reports `RequestError::InvalidJson`).
    Page(u16),
}

pub(crate) type Predicate = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// A pending injection: the next `remaining` calls of `method` matching `when` fail.
pub(crate) struct Injection {
    pub method: String,
    pub when: Option<Predicate>,
    pub failure: Failure,
    pub remaining: u32,
    /// A window's end: the injection matches every call until then (and is then dropped).
    pub until: Option<std::time::Instant>,
}

/// Takes the failure of the first injection matching this call, if any.
pub(crate) fn take_injected(
    injections: &mut Vec<Injection>,
    method: &str,
    params: &Value,
) -> Option<Failure> {
    let now = std::time::Instant::now();
    injections.retain(|i| i.until.is_none_or(|until| now < until));
    let index = injections.iter().position(|i| {
        i.method == method && i.remaining > 0 && i.when.as_ref().is_none_or(|when| when(params))
    })?;
    let injection = &mut injections[index];
    injection.remaining -= 1;
    let failure = injection.failure.clone();
    if injection.remaining == 0 {
        injections.remove(index);
    }
    Some(failure)
}
