//! The `openai_compat` provider against the fake chat-completions API, when it works:
//! streaming, tool calls from interleaved fragments, images, usage, reasoning content, custom
//! headers and the quirks of compatible servers. Errors: `provider_openai_errors.rs`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::llm::{self, StopReason};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::{Value, json};
use tests::fake_llm::{
    FAKE_KEY, FAKE_MODEL, FakeLlm, FakeToolCall, FakeUsage, Quirks, Reply, Script,
};
use tests::provider_calls::http;
use tests::provider_calls::{SYSTEM, call};

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::OpenAiCompat)
}

fn tool_result(call_id: &str, content: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
        }],
    }
}

#[tokio::test]
async fn plain_text_streams_with_the_documented_request() {
    let fake = FakeLlm::start().await;
    fake.push(Script::text("Hello from the fake OpenAI!"));
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert!(out.text_deltas() > 3);
    assert_eq!(out.text(), "Hello from the fake OpenAI!");
    let response = out.response();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.message.text(), "Hello from the fake OpenAI!");

    let req = fake.last_request().unwrap();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {FAKE_KEY}").as_str())
    );
    assert_eq!(req.body["model"], FAKE_MODEL);
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
    assert!(
        req.body.get("max_tokens").is_none(),
        "max_tokens only when configured"
    );
    assert_eq!(
        req.body["messages"][0],
        json!({"role": "system", "content": SYSTEM})
    );
    assert_eq!(
        req.body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(
        req.body["tools"][0],
        json!({"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}}})
    );
}

#[tokio::test]
async fn max_tokens_is_sent_when_configured() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.max_tokens = Some(333);
    let provider = llm::build(&cfg, &http()).unwrap();
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert_eq!(fake.last_request().unwrap().body["max_tokens"], 333);
}

#[tokio::test]
async fn one_tool_call_round_trips_with_a_tool_message() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::default().tool(
            FakeToolCall::new("get_weather", r#"{"city":"Paris"}"#)
                .id("call_1")
                .pieces(6),
        ),
    );
    fake.push(Script::text("Sunny."));
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let mut messages = vec![Message::user_text("weather?")];
    let out = call(&*provider, &messages, 0).await;
    assert_eq!(
        out.started_tools(),
        vec![("call_1".to_owned(), "get_weather".to_owned())]
    );
    let response = out.response();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = response.message.tool_calls().collect();
    assert_eq!(calls[0].input, &json!({"city": "Paris"}));
    messages.push(response.message);
    messages.push(tool_result("call_1", "sunny, 21°C"));
    assert_eq!(
        call(&*provider, &messages, 0)
            .await
            .response()
            .message
            .text(),
        "Sunny."
    );
    let sent = fake.last_request().unwrap().body["messages"].clone();
    assert_eq!(
        sent[2],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
               "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]})
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21°C"})
    );
}

#[tokio::test]
async fn two_parallel_calls_interleaved_by_index() {
    let fake = FakeLlm::start().await;
    let reply = Reply::text("Checking.")
        .tool(FakeToolCall::new("get_weather", r#"{"city":"Oslo","units":"metric"}"#).pieces(5))
        .tool(FakeToolCall::new("get_time", r#"{"tz":"Europe/Oslo"}"#).pieces(5));
    fake.push(reply);
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let out = call(&*provider, &[Message::user_text("go")], 0).await;
    let names: Vec<String> = out.started_tools().into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    let response = out.response();
    let calls: Vec<_> = response.message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].input, &json!({"city": "Oslo", "units": "metric"}));
    assert_eq!(calls[1].input, &json!({"tz": "Europe/Oslo"}));
    assert_eq!(response.message.text(), "Checking.");
}

#[tokio::test]
async fn arguments_in_many_pieces_and_empty_arguments() {
    let fake = FakeLlm::start().await;
    let long = r#"{"city": "北京 / Beijing \"capital\"", "list": [1, 2, {"deep": true}]}"#;
    fake.push(
        Reply::default()
            .tool(FakeToolCall::new("get_weather", long).pieces(50))
            .tool(FakeToolCall::new("get_time", "")),
    );
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let response = call(&*provider, &[Message::user_text("go")], 0)
        .await
        .response();
    let calls: Vec<_> = response.message.tool_calls().collect();
    assert_eq!(
        calls[0].input,
        &serde_json::from_str::<Value>(long).unwrap()
    );
    assert_eq!(calls[1].input, &json!({}));
}

#[tokio::test]
async fn images_go_as_data_urls() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 9, 9];
    let message = Message {
        role: Role::User,
        content: vec![
            Block::text("what is this?"),
            Block::Image {
                mime_type: "image/jpeg".into(),
                data: jpeg.clone(),
            },
        ],
    };
    call(&*provider, &[message], 0).await.response();
    let b64 = serde_json::to_value(Block::Image {
        mime_type: "image/jpeg".into(),
        data: jpeg,
    })
    .unwrap()["data"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        fake.last_request().unwrap().body["messages"][1]["content"],
        json!([{"type": "text", "text": "what is this?"},
               {"type": "image_url", "image_url": {"url": format!("data:image/jpeg;base64,{b64}")}}])
    );
}

#[tokio::test]
async fn usage_with_cached_tokens_in_the_last_chunk_in_the_finish_chunk_or_never() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let usage = FakeUsage {
        input: 40,
        output: 9,
        cache_read: 1000,
        cache_write: 0,
    };
    fake.push(Reply::text("ok").usage(usage));
    let u = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response()
        .usage;
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens
        ),
        (40, 9, 1000, 0)
    );
    let quirks = Quirks {
        usage_in_finish_chunk: true,
        ..Quirks::default()
    };
    fake.push(Reply::text("ok").usage(usage).quirks(quirks));
    let u = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response()
        .usage;
    assert_eq!((u.input_tokens, u.cache_read_tokens), (40, 1000));
    let quirks = Quirks {
        no_usage: true,
        ..Quirks::default()
    };
    fake.push(Reply::text("ok").usage(usage).quirks(quirks));
    let u = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response()
        .usage;
    assert_eq!(u, Default::default());
}

#[tokio::test]
async fn tolerates_no_done_empty_choices_and_stop_with_tool_calls() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let quirks = Quirks {
        no_done: true,
        empty_choices_chunk: true,
        ..Quirks::default()
    };
    fake.push(Reply::text("no done marker").quirks(quirks));
    let started = Instant::now();
    assert_eq!(
        call(&*provider, &[Message::user_text("hi")], 0)
            .await
            .response()
            .message
            .text(),
        "no done marker"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    fake.push(
        Reply::default()
            .tool(FakeToolCall::new("get_time", "{}"))
            .stop_reason("stop"),
    );
    let response = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    fake.push(Reply::text("cut").stop_reason("length"));
    assert_eq!(
        call(&*provider, &[Message::user_text("hi")], 0)
            .await
            .response()
            .stop_reason,
        StopReason::MaxTokens
    );
}

#[tokio::test]
async fn reasoning_content_is_kept_and_sent_back_only_with_tool_calls() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    fake.push(
        Reply::default()
            .thinking("I should call get_time.", "")
            .tool(FakeToolCall::new("get_time", "{}").id("call_r")),
    );
    fake.push(Reply::text("It is noon.").thinking("Answer now.", ""));
    let mut messages = vec![Message::user_text("time?")];
    let first = call(&*provider, &messages, 0).await.response();
    assert_eq!(
        first.message.content[0],
        Block::Reasoning {
            provider: "openai_compat".into(),
            data: json!({"reasoning_content": "I should call get_time."})
        }
    );
    messages.push(first.message);
    messages.push(tool_result("call_r", "12:00"));
    let second = call(&*provider, &messages, 0).await.response();
    let sent = fake.last_request().unwrap().body["messages"].clone();
    assert_eq!(sent[2]["reasoning_content"], "I should call get_time.");
    messages.push(second.message);
    messages.push(Message::user_text("thanks"));
    call(&*provider, &messages, 0).await.response();
    let sent = fake.last_request().unwrap().body["messages"].clone();
    assert_eq!(
        sent[4],
        json!({"role": "assistant", "content": "It is noon."}),
        "no reasoning without tool calls"
    );
}

#[tokio::test]
async fn custom_headers_and_api_base_are_honoured() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.api_base = fake.url();
    cfg.headers = BTreeMap::from([(
        "HTTP-Referer".to_owned(),
        Secret::new("https://kernel.example"),
    )]);
    let provider = llm::build(&cfg, &http()).unwrap();
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    let req = fake.last_request().unwrap();
    assert_eq!(req.path, "/chat/completions");
    assert_eq!(req.header("http-referer"), Some("https://kernel.example"));
    assert!(!format!("{provider:?}").contains(FAKE_KEY));
}
