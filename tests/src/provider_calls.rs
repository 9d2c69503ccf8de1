//! Calling a provider directly in tests: a system prompt, sample tools, a request builder,
//! `call`, which drains the stream (or keeps the error that came before it), and a check that an
//! error shows no secret.

use kernel_agentd::conversation::{Message, ToolSpec};
use kernel_agentd::llm::{LlmError, ModelRequest, Provider};
use serde_json::json;

use crate::fake_llm::{Drained, FAKE_MODEL, drain};

/// The system prompt the provider tests send.
pub const SYSTEM: &str = "You are Kernel, a helpful assistant.";

/// Two tools: `get_weather(city)` and `get_time()`.
pub fn sample_tools() -> Vec<ToolSpec> {
    let schema =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Weather for a city.".into(),
            input_schema: schema,
        },
        ToolSpec {
            name: "get_time".into(),
            description: "The current time.".into(),
            input_schema: json!({"type": "object"}),
        },
    ]
}

/// A request for the fake model with [`SYSTEM`].
pub fn request<'a>(
    messages: &'a [Message],
    tools: &'a [ToolSpec],
    stable_prefix: usize,
) -> ModelRequest<'a> {
    ModelRequest {
        model: FAKE_MODEL,
        system: SYSTEM,
        tools,
        messages,
        stable_prefix,
    }
}

/// Streams `messages` with the sample tools and collects everything.
pub async fn call(provider: &dyn Provider, messages: &[Message], stable_prefix: usize) -> Drained {
    let tools = sample_tools();
    match provider
        .stream(request(messages, &tools, stable_prefix))
        .await
    {
        Ok(stream) => drain(stream).await,
        Err(e) => Drained {
            events: Vec::new(),
            result: Err(e),
        },
    }
}

/// Streams a plain "hi" and returns the error the call ends with (panics if it ends well).
pub async fn hi_error(provider: &dyn Provider) -> LlmError {
    call(provider, &[Message::user_text("hi")], 0).await.error()
}

/// Asserts that `e` is a stream error whose message contains `needle`.
pub fn assert_stream_error(e: &LlmError, needle: &str) {
    assert!(
        matches!(e, LlmError::Stream { message } if message.contains(needle)),
        "expected a stream error with {needle:?}: {e:?}"
    );
}

/// Panics when `e`'s message or debug form contains one of `secrets`.
pub fn assert_no_secret(e: &LlmError, secrets: &[&str]) {
    for text in [e.to_string(), format!("{e:?}")] {
        for secret in secrets {
            assert!(!text.contains(secret), "secret leaked in {text}");
        }
    }
}

/// The shared HTTP client providers and the titles client are built on (agentd builds one at
/// start).
pub fn http() -> kernel_agentd::http::Client {
    kernel_agentd::http::client().expect("build the HTTP client")
}
