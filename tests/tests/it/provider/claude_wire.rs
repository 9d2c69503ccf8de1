//! The `claude` provider's request shape against the strict fake: images, thinking round
//! trips, role merging, validation, and prompt-cache breakpoints with a byte-stable prefix.

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::llm::{self, LlmError};
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::json;
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::provider_calls::call;
use tests::provider_calls::http;

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::Claude)
}

#[tokio::test]
async fn images_go_as_base64_source_blocks() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3];
    let message = Message {
        role: Role::User,
        content: vec![
            Block::Image {
                mime_type: "image/png".into(),
                data: png.clone(),
            },
            Block::text("what is this?"),
        ],
    };
    call(&*provider, &[message], 0).await.response();
    let req = fake.last_request().unwrap();
    // The conversation model's own serde encodes bytes as standard base64.
    let b64 = serde_json::to_value(Block::Image {
        mime_type: "image/png".into(),
        data: png,
    })
    .unwrap()["data"]
        .clone();
    assert_eq!(
        req.body["messages"][0]["content"][0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}})
    );
}

#[tokio::test]
async fn thinking_round_trips_with_its_signature_and_foreign_reasoning_is_dropped() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::default()
            .thinking("Let me think.", "sig-abc")
            .tool(FakeToolCall::new("get_time", "{}").id("toolu_t")),
    );
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let mut messages = vec![Message::user_text("time?")];
    let response = call(&*provider, &messages, 0).await.response();
    let Block::Reasoning {
        provider: tag,
        data,
    } = &response.message.content[0]
    else {
        panic!("{response:?}")
    };
    assert_eq!(tag, "claude");
    assert_eq!(
        data,
        &json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig-abc"})
    );
    let mut assistant = response.message;
    assistant.content.push(Block::Reasoning {
        provider: "openai_compat".into(),
        data: json!({"reasoning_content": "x"}),
    });
    messages.push(assistant);
    messages.push(Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: "toolu_t".into(),
            content: "12:00".into(),
            is_error: false,
        }],
    });
    call(&*provider, &messages, 0).await.response();
    let sent = &fake.last_request().unwrap().body["messages"][1]["content"];
    assert_eq!(
        sent[0],
        json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig-abc"})
    );
    assert_eq!(sent[1]["type"], "tool_use");
    assert_eq!(
        sent.as_array().unwrap().len(),
        2,
        "foreign reasoning must be dropped: {sent}"
    );
}

#[tokio::test]
async fn same_role_messages_are_merged_with_tool_results_first() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::default().tool(FakeToolCall::new("get_time", "{}").id("toolu_1")));
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let mut messages = vec![Message::user_text("a"), Message::user_text("b")];
    let response = call(&*provider, &messages, 0).await.response();
    messages.push(response.message);
    messages.push(Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: "toolu_1".into(),
            content: "cancelled".into(),
            is_error: true,
        }],
    });
    messages.push(Message::user_text("next question"));
    call(&*provider, &messages, 0).await.response();
    let body = fake.last_request().unwrap().body;
    let wire = body["messages"].as_array().unwrap();
    assert_eq!(wire.len(), 3, "{wire:?}");
    assert_eq!(wire[0]["content"].as_array().unwrap().len(), 2);
    assert_eq!(
        wire[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "cancelled", "is_error": true})
    );
    assert_eq!(
        wire[2]["content"][1],
        json!({"type": "text", "text": "next question"})
    );
}

#[tokio::test]
async fn strict_fake_rejects_an_unanswered_tool_use() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let messages = vec![
        Message::user_text("a"),
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolCall {
                id: "toolu_x".into(),
                name: "get_time".into(),
                input: json!({}),
            }],
        },
        Message::user_text("b"),
    ];
    let e = call(&*provider, &messages, 0).await.error();
    assert!(
        matches!(&e, LlmError::BadRequest { status: 400, message } if message.contains("toolu_x")),
        "{e:?}"
    );
}

#[tokio::test]
async fn cache_breakpoints_and_a_byte_identical_prefix() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let mut history = vec![
        Message::user_text("first question"),
        Message::assistant_text("first answer"),
    ];
    history.push(Message::user_text("what time is it?"));
    // Turn 2, step 1: the model calls a tool.
    fake.push(
        Reply::default().tool(FakeToolCall::new("get_time", r#"{"tz":"UTC"}"#).id("toolu_a")),
    );
    let response = call(&*provider, &history, 2).await.response();
    let first = fake.last_request().unwrap();
    let msgs = first.body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[1]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(msgs[0]["content"][0].get("cache_control").is_none());
    assert!(msgs[2]["content"][0].get("cache_control").is_none());
    assert_eq!(first.raw_body.matches("\"cache_control\"").count(), 3);
    // Step 2 of the same turn: the prefix (system + tools + messages[..2]) is byte-identical.
    history.push(response.message);
    history.push(Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: "toolu_a".into(),
            content: "12:00".into(),
            is_error: false,
        }],
    });
    fake.push(Script::text("It is noon."));
    let response = call(&*provider, &history, 2).await.response();
    let second = fake.last_request().unwrap();
    let prefix = first.messages_prefix(2);
    assert!(prefix.contains("first answer") && !prefix.contains("what time"));
    assert_eq!(second.messages_prefix(2), prefix);
    assert!(second.raw_body.starts_with(prefix));
    // Next turn: the stable prefix grows to cover the whole previous turn; apart from the
    // moved breakpoint marker, the old prefix is unchanged.
    history.push(response.message);
    history.push(Message::user_text("thanks"));
    call(&*provider, &history, 6).await.response();
    let third = fake.last_request().unwrap();
    let msgs = third.body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[5]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let strip = |s: &str| s.replace(",\"cache_control\":{\"type\":\"ephemeral\"}", "");
    assert_eq!(
        strip(third.messages_prefix(5)),
        strip(second.messages_prefix(5))
    );
    assert_eq!(
        third.messages_prefix(5).matches("cache_control").count(),
        2,
        "system and tools keep theirs; the old breakpoint moved"
    );
}

#[tokio::test]
async fn build_refuses_a_claude_provider_without_max_tokens() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.max_tokens = None;
    let e = llm::build(&cfg, &http()).unwrap_err();
    assert!(e.to_string().contains("max_tokens"), "{e}");
}
