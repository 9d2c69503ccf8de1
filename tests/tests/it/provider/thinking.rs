//! Reasoning settings on the wire against the strict fake: Anthropic extended thinking
//! (`thinking: {type: enabled, budget_tokens}`) whose blocks round-trip unchanged across a tool
//! loop (and a loop that drops them is refused, as Anthropic refuses it; a tool loop from
//! history without thinking is continued with thinking off), thinking only for the configured
//! models, and an OpenAI-compatible `reasoning_effort`.

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::llm::{self, LlmError};
use kernel_common::config::{ProviderConfig, ProviderKind, ThinkingConfig, ThinkingMode};
use serde_json::json;
use tests::fake_llm::{FAKE_KEY, FAKE_MODEL, FakeLlm, FakeToolCall, Reply};
use tests::provider_calls::{call, http};

fn claude_thinking(fake: &FakeLlm, models: Vec<String>) -> ProviderConfig {
    let mut cfg = fake.provider_config(ProviderKind::Claude);
    cfg.max_tokens = Some(4096);
    cfg.thinking = Some(ThinkingConfig {
        mode: ThinkingMode::Budget(2048),
        models,
    });
    cfg
}

fn tool_result(id: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: id.into(),
            content: "no memories".into(),
            is_error: false,
        }],
    }
}

#[tokio::test]
async fn thinking_is_asked_for_and_round_trips_across_a_tool_loop() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::default()
            .thinking("I should search memory.", "sig-loop-1")
            .tool(FakeToolCall::new("memory_search", r#"{"query":"tea"}"#).id("toolu_m")),
    );
    fake.push(Reply::text("Green tea.").thinking("Now answer.", "sig-loop-2"));
    let provider = llm::build(&claude_thinking(&fake, Vec::new()), &http()).unwrap();
    let mut messages = vec![Message::user_text("what tea do I like?")];
    let first = call(&*provider, &messages, 0).await.response();
    assert_eq!(
        llm::reasoning_text(&first.message),
        "I should search memory."
    );
    messages.push(first.message);
    messages.push(tool_result("toolu_m"));
    let second = call(&*provider, &messages, 0).await.response();
    assert_eq!(second.message.text(), "Green tea.");
    assert_eq!(llm::reasoning_text(&second.message), "Now answer.");

    let requests = fake.requests();
    for request in &requests {
        assert_eq!(
            request.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
    }
    let assistant = &requests[1].body["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "I should search memory.", "signature": "sig-loop-1"})
    );
    assert_eq!(assistant[1]["type"], "tool_use");
}

#[tokio::test]
async fn a_tool_loop_that_drops_or_changes_the_thinking_is_refused() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::default()
            .thinking("Look it up.", "sig-drop")
            .tool(FakeToolCall::new("memory_search", r#"{"query":"tea"}"#).id("toolu_d")),
    );
    let provider = llm::build(&claude_thinking(&fake, Vec::new()), &http()).unwrap();
    let asked = Message::user_text("tea?");
    let first = call(&*provider, std::slice::from_ref(&asked), 0)
        .await
        .response();

    // Kernel never sends this (the provider turns thinking off instead, see below): the
    // request as a client that dropped the thinking block would send it.
    let mut dropped = fake.last_request().unwrap().body;
    dropped["messages"] = json!([
        {"role": "user", "content": "tea?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_d", "name": "memory_search", "input": {"query": "tea"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_d", "content": "none"}]},
    ]);
    let response = http()
        .post(format!("{}/v1/messages", fake.url()))
        .header("x-api-key", FAKE_KEY)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(dropped.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let text = response.text().await.unwrap();
    assert!(text.contains("must start with a thinking block"), "{text}");

    let mut changed = first.message;
    for block in &mut changed.content {
        if let Block::Reasoning { data, .. } = block {
            data["thinking"] = json!("Look it up!");
        }
    }
    let messages = [asked, changed, tool_result("toolu_d")];
    let e = call(&*provider, &messages, 0).await.error();
    assert!(
        matches!(&e, LlmError::BadRequest { status: 400, message } if message.contains("Invalid `signature`")),
        "{e:?}"
    );
}

#[tokio::test]
async fn thinking_applies_only_to_the_models_it_names() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(
        &claude_thinking(&fake, vec!["another-model".into()]),
        &http(),
    )
    .unwrap();
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert!(fake.last_request().unwrap().body.get("thinking").is_none());

    let provider = llm::build(&claude_thinking(&fake, vec![FAKE_MODEL.into()]), &http()).unwrap();
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert_eq!(
        fake.last_request().unwrap().body["thinking"]["budget_tokens"],
        2048
    );
}

#[tokio::test]
async fn an_openai_compatible_provider_sends_its_reasoning_effort() {
    let fake = FakeLlm::start().await;
    let mut cfg = fake.provider_config(ProviderKind::OpenAiCompat);
    cfg.thinking = Some(ThinkingConfig {
        mode: ThinkingMode::Effort("high".into()),
        models: Vec::new(),
    });
    let provider = llm::build(&cfg, &http()).unwrap();
    fake.push(Reply::text("Done.").thinking("Short thought.", ""));
    let out = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert_eq!(llm::reasoning_text(&out.message), "Short thought.");
    assert_eq!(
        fake.last_request().unwrap().body["reasoning_effort"],
        "high"
    );
}

#[tokio::test]
async fn a_tool_loop_from_before_thinking_is_continued_without_it() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&claude_thinking(&fake, Vec::new()), &http()).unwrap();
    // History from before thinking was on: a tool call without thinking, its (synthetic)
    // result, then the owner's next message (merged into the same user message on the wire).
    let asked = Message::user_text("tea?");
    let assistant = Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: "toolu_old".into(),
            name: "memory_search".into(),
            input: json!({"query": "tea"}),
        }],
    };
    let mut result = tool_result("toolu_old");
    result.content.push(Block::text("and coffee?"));
    let out = call(&*provider, &[asked, assistant, result], 0)
        .await
        .response();
    assert_eq!(out.message.text(), tests::fake_llm::DEFAULT_TEXT);
    assert!(fake.last_request().unwrap().body.get("thinking").is_none());
}
