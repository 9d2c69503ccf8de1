//! Driving `Chat` from tests: sending a message, collecting events with a deadline, reading the
//! stored transcript, and finding things in the fake LLM's request bodies.

use std::time::Duration;

use kernel_agentd::conversation::Message;
use kernel_agentd::store::Store;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tonic::Streaming;
use tonic::transport::Channel;

use crate::config::TestConfig;

/// Longest a test waits for one event.
pub const EVENT_DEADLINE: Duration = Duration::from_secs(20);

/// Sends `text` and returns the event stream.
pub async fn send(client: &mut AgentClient<Channel>, text: &str) -> Streaming<pb::ChatEvent> {
    let req = pb::ChatRequest {
        text: text.into(),
        ..Default::default()
    };
    client.chat(req).await.expect("Chat accepted").into_inner()
}

/// The next event, or `None` at the end of the stream; panics after [`EVENT_DEADLINE`].
pub async fn next(stream: &mut Streaming<pb::ChatEvent>) -> Option<Event> {
    let item = tokio::time::timeout(EVENT_DEADLINE, stream.message())
        .await
        .expect("an event in time");
    item.expect("a valid event")
        .map(|e| e.event.expect("event set"))
}

/// Every remaining event.
pub async fn rest(stream: &mut Streaming<pb::ChatEvent>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = next(stream).await {
        out.push(e);
    }
    out
}

/// Sends `text` and collects the whole turn.
pub async fn turn(client: &mut AgentClient<Channel>, text: &str) -> Vec<Event> {
    let mut stream = send(client, text).await;
    rest(&mut stream).await
}

/// Reads events until one matches `pred`, returning it; panics if the stream ends first.
pub async fn until(stream: &mut Streaming<pb::ChatEvent>, pred: impl Fn(&Event) -> bool) -> Event {
    loop {
        match next(stream).await {
            Some(e) if pred(&e) => return e,
            Some(_) => {}
            None => panic!("the stream ended before the expected event"),
        }
    }
}

/// The final answer of a completed turn; panics (showing the events) otherwise.
pub fn completed(events: &[Event]) -> &pb::TurnCompleted {
    match events.last() {
        Some(Event::Completed(c)) => c,
        _ => panic!("the turn did not complete: {events:?}"),
    }
}

/// The session id from the `started` event.
pub fn session_id(events: &[Event]) -> i64 {
    match events.first() {
        Some(Event::Started(s)) => s.session_id,
        _ => panic!("the first event is not `started`: {events:?}"),
    }
}

/// The concatenated text deltas.
pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| {
            if let Event::TextDelta(d) = e {
                Some(d.text.as_str())
            } else {
                None
            }
        })
        .collect()
}

/// The stages of the `speech` events, in order.
pub fn speech_stages(events: &[Event]) -> Vec<pb::SpeechStage> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Speech(s) => Some(s.stage()),
            _ => None,
        })
        .collect()
}

/// The stored transcript of session `session_id` (read through a second store handle).
pub async fn stored(cfg: &TestConfig, session_id: i64) -> Vec<Message> {
    let store = Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .expect("open the database");
    let messages = store
        .load_messages(session_id)
        .await
        .expect("load messages");
    store.close().await;
    messages.into_iter().map(|m| m.message).collect()
}

/// Stores a user message in session `session_id` (through a second store handle), as a turn
/// would: the session is no longer empty (`NewSession` keeps an empty current session).
pub async fn store_message(cfg: &TestConfig, session_id: i64, text: &str) {
    let store = Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .expect("open the database");
    store
        .append_messages(session_id, &[Message::user_text(text)])
        .await
        .expect("store a message");
    store.close().await;
}

/// The messages of a request body in its provider's wire form (OpenAI: without the system one).
pub fn wire_messages(body: &Value) -> Vec<Value> {
    let all = body["messages"].as_array().cloned().unwrap_or_default();
    all.into_iter().filter(|m| m["role"] != "system").collect()
}

/// The system prompt of a request body (Anthropic `system` blocks or OpenAI's system message).
pub fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "system"))
            .map(|m| {
                m["content"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| m["content"].to_string())
            })
            .unwrap_or_default(),
    }
}

/// Both provider kinds, for tests that run against each.
pub const KINDS: [&str; 2] = ["claude", "openai_compat"];

/// `value` without Anthropic `cache_control` markers (their placement moves with the stable
/// prefix; the content they mark is what a prompt cache matches).
pub fn without_cache_control(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_cache_control(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_cache_control).collect()),
        other => other.clone(),
    }
}
