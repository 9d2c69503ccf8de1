//! The `claude` provider against the fake Anthropic Messages API: streaming, tool calls,
//! images, usage, prompt-cache breakpoints, every error class, stalls and broken streams.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Message, Role, ToolSpec};
use kernel_agentd::llm::{self, LlmError, ModelRequest, Provider, StopReason};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::{Value, json};
use tests::fake_llm::{
    ErrorKind, FAKE_KEY, FAKE_MODEL, FakeLlm, FakeToolCall, FakeUsage, HttpError, Reply, Script,
    drain,
};

const SYSTEM: &str = "You are Kernel, a helpful assistant.";

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::Claude)
}

fn tools() -> Vec<ToolSpec> {
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

fn request<'a>(
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

async fn call(
    provider: &dyn Provider,
    messages: &[Message],
    stable_prefix: usize,
) -> tests::fake_llm::Drained {
    let tools = tools();
    match provider
        .stream(request(messages, &tools, stable_prefix))
        .await
    {
        Ok(stream) => drain(stream).await,
        Err(e) => tests::fake_llm::Drained {
            events: Vec::new(),
            result: Err(e),
        },
    }
}

fn assert_no_secret(e: &LlmError, secrets: &[&str]) {
    for text in [e.to_string(), format!("{e:?}")] {
        for secret in secrets {
            assert!(!text.contains(secret), "secret leaked in {text}");
        }
    }
}

#[tokio::test]
async fn plain_text_streams_in_deltas_with_the_documented_request() {
    let fake = FakeLlm::start().await;
    fake.push(Script::text("Hello from the fake Claude!"));
    let provider = llm::build(&config(&fake)).unwrap();
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert!(out.text_deltas() > 3, "text must arrive in several deltas");
    assert_eq!(out.text(), "Hello from the fake Claude!");
    let response = out.response();
    assert_eq!(response.message.role, Role::Assistant);
    assert_eq!(response.message.text(), "Hello from the fake Claude!");
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    let req = fake.last_request().unwrap();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(req.header("x-api-key"), Some(FAKE_KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.body["model"], FAKE_MODEL);
    assert_eq!(req.body["max_tokens"], 1024);
    assert_eq!(req.body["stream"], true);
    assert_eq!(
        req.body["system"],
        json!([{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(req.body["tools"][0]["name"], "get_weather");
    assert_eq!(
        req.body["tools"][1]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        req.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
}

#[tokio::test]
async fn one_tool_call_is_assembled_from_input_json_deltas() {
    let fake = FakeLlm::start().await;
    let tool = FakeToolCall::new("get_weather", r#"{"city": "Paris", "days": 3}"#)
        .id("toolu_01")
        .pieces(7);
    fake.push(Reply::default().tool(tool));
    let provider = llm::build(&config(&fake)).unwrap();
    let out = call(&*provider, &[Message::user_text("weather?")], 0).await;
    assert_eq!(
        out.started_tools(),
        vec![("toolu_01".to_owned(), "get_weather".to_owned())]
    );
    let response = out.response();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = response.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].id, calls[0].name), ("toolu_01", "get_weather"));
    assert_eq!(calls[0].input, &json!({"city": "Paris", "days": 3}));
}

#[tokio::test]
async fn two_parallel_tool_calls_after_text() {
    let fake = FakeLlm::start().await;
    let reply = Reply::text("Let me check both.")
        .tool(FakeToolCall::new("get_weather", r#"{"city":"Oslo"}"#))
        .tool(FakeToolCall::new("get_time", r#"{"tz":"Europe/Oslo"}"#));
    fake.push(reply);
    let provider = llm::build(&config(&fake)).unwrap();
    let out = call(
        &*provider,
        &[Message::user_text("weather and time in Oslo")],
        0,
    )
    .await;
    assert_eq!(out.text(), "Let me check both.");
    let names: Vec<String> = out.started_tools().into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    let response = out.response();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.message.text(), "Let me check both.");
    let calls: Vec<_> = response.message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(calls[1].input, &json!({"tz": "Europe/Oslo"}));
}

#[tokio::test]
async fn input_in_many_pieces_and_empty_input() {
    let fake = FakeLlm::start().await;
    let long =
        r#"{"city": "São Paulo, Brasil — 圣保罗", "units": "metric", "nested": {"a": [1, 2, 3]}}"#;
    let reply = Reply::default()
        .tool(FakeToolCall::new("get_weather", long).pieces(40))
        .tool(FakeToolCall::new("get_time", ""));
    fake.push(reply);
    let provider = llm::build(&config(&fake)).unwrap();
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
async fn images_go_as_base64_source_blocks() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
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
async fn usage_includes_cache_fields() {
    let fake = FakeLlm::start().await;
    let usage = FakeUsage {
        input: 21,
        output: 34,
        cache_read: 1800,
        cache_write: 250,
    };
    fake.push(Reply::text("ok").usage(usage));
    let provider = llm::build(&config(&fake)).unwrap();
    let response = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    assert_eq!(response.usage.input_tokens, 21);
    assert_eq!(response.usage.output_tokens, 34);
    assert_eq!(response.usage.cache_read_tokens, 1800);
    assert_eq!(response.usage.cache_write_tokens, 250);
}

#[tokio::test]
async fn http_errors_are_typed_and_redacted() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers.insert(
        "x-org-secret".into(),
        Secret::new("org-header-secret-value"),
    );
    let provider = llm::build(&cfg).unwrap();
    let cases: Vec<(ErrorKind, fn(&LlmError) -> bool)> = vec![
        (ErrorKind::Unauthorized, |e| {
            matches!(e, LlmError::Authentication { status: 401, .. })
        }),
        (ErrorKind::Forbidden, |e| {
            matches!(e, LlmError::Authentication { status: 403, .. })
        }),
        (
            ErrorKind::BadRequest,
            |e| matches!(e, LlmError::BadRequest { status: 400, message } if message.contains("valid list")),
        ),
        (
            ErrorKind::PromptTooLong,
            |e| matches!(e, LlmError::ContextTooLong { message } if message.contains("prompt is too long")),
        ),
        (
            ErrorKind::RateLimited { retry_after: 17 },
            |e| matches!(e, LlmError::RateLimited { retry_after: Some(d), .. } if *d == Duration::from_secs(17)),
        ),
        (ErrorKind::Internal, |e| {
            matches!(e, LlmError::Overloaded { status: 500, .. })
        }),
        (ErrorKind::Overloaded, |e| {
            matches!(e, LlmError::Overloaded { status: 529, .. })
        }),
    ];
    for (kind, expected) in cases {
        fake.push(HttpError::new(kind));
        let e = call(&*provider, &[Message::user_text("hi")], 0)
            .await
            .error();
        assert!(expected(&e), "{kind:?} gave {e:?}");
        assert_no_secret(&e, &[FAKE_KEY, "org-header-secret-value"]);
    }
    // The 401 message echoes the key: it must come back masked.
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(e.to_string().contains("sk-f…cdef"), "{e}");
    // A provider message quoting a header value.
    fake.push(Script::raw_error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad header org-header-secret-value"}}"#,
    ));
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(e.to_string().contains("[REDACTED]"), "{e}");
    assert_no_secret(&e, &[FAKE_KEY, "org-header-secret-value"]);
}

#[tokio::test]
async fn capability_and_unknown_shapes() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    fake.push(Script::raw_error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"This model does not support image input"}}"#,
    ));
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(matches!(e, LlmError::CapabilityMissing { .. }), "{e:?}");
    assert!(e.to_string().contains("switch provider or model"), "{e}");
    fake.push(Script::Raw {
        status: 502,
        content_type: "text/html".into(),
        body: "<html>Bad gateway</html>".into(),
        headers: vec![],
    });
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(
        matches!(e, LlmError::Overloaded { status: 502, .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn network_errors_are_typed_and_redacted() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.api_base = format!("http://127.0.0.1:{port}");
    let provider = llm::build(&cfg).unwrap();
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(matches!(e, LlmError::Network { .. }), "{e:?}");
    assert!(e.is_transient());
    assert_no_secret(&e, &[FAKE_KEY]);
}

#[tokio::test]
async fn stall_ends_with_stalled_within_the_idle_timeout() {
    for ping in [true, false] {
        let fake = FakeLlm::start().await;
        let mut cfg = config(&fake);
        cfg.stream_idle_timeout = Duration::from_millis(300);
        let provider = llm::build(&cfg).unwrap();
        fake.push(Script::Stall { ping });
        let started = Instant::now();
        let e = call(&*provider, &[Message::user_text("hi")], 0)
            .await
            .error();
        assert_eq!(
            e,
            LlmError::Stalled {
                after: Duration::from_millis(300)
            }
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn mid_stream_error_events() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    fake.push(Script::MidStreamError {
        text: "Partial answ".into(),
        error: HttpError::new(ErrorKind::Overloaded),
    });
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert_eq!(out.text(), "Partial answ");
    assert!(matches!(out.error(), LlmError::Overloaded { .. }));
    fake.push(Script::MidStreamError {
        text: "x".into(),
        error: HttpError::new(ErrorKind::Internal),
    });
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("api_error")),
        "{e:?}"
    );
}

#[tokio::test]
async fn abrupt_close_and_truncated_streams_are_errors() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    fake.push(Script::AbruptClose {
        text: "Half a sen".into(),
    });
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert_eq!(out.text(), "Half a sen");
    assert!(matches!(out.error(), LlmError::Stream { .. }));
    fake.push(Script::Truncated {
        text: "Half".into(),
    });
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("message_stop")),
        "{e:?}"
    );
    fake.push(Script::raw_sse("event: message_start\ndata: {not json\n\n"));
    let e = call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("malformed JSON")),
        "{e:?}"
    );
}

#[tokio::test]
async fn custom_headers_and_api_base_are_honoured() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.api_base = format!("{}/", fake.url());
    cfg.headers = BTreeMap::from([
        (
            "anthropic-beta".to_owned(),
            Secret::new("prompt-caching-2024-07-31"),
        ),
        ("X-Custom-Org".to_owned(), Secret::new("org-12345")),
    ]);
    let provider = llm::build(&cfg).unwrap();
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    let req = fake.last_request().unwrap();
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(
        req.header("anthropic-beta"),
        Some("prompt-caching-2024-07-31")
    );
    assert_eq!(req.header("x-custom-org"), Some("org-12345"));
    assert_eq!(req.header("x-api-key"), Some(FAKE_KEY));
    assert!(!format!("{provider:?}").contains(FAKE_KEY));
}

#[tokio::test]
async fn thinking_round_trips_with_its_signature_and_foreign_reasoning_is_dropped() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::default()
            .thinking("Let me think.", "sig-abc")
            .tool(FakeToolCall::new("get_time", "{}").id("toolu_t")),
    );
    let provider = llm::build(&config(&fake)).unwrap();
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
    let provider = llm::build(&config(&fake)).unwrap();
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
    let provider = llm::build(&config(&fake)).unwrap();
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

/// Byte offset just after element `k - 1` of the top-level `"messages"` array in `raw`.
fn messages_prefix_end(raw: &str, k: usize) -> usize {
    let start = raw.find("\"messages\":[").unwrap() + "\"messages\":[".len();
    let (mut depth, mut in_string, mut escaped, mut done) = (0usize, false, false, 0usize);
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
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    done += 1;
                    if done == k {
                        return start + i + 1;
                    }
                }
            }
            _ => {}
        }
    }
    panic!("fewer than {k} messages in {raw}");
}

#[tokio::test]
async fn cache_breakpoints_and_a_byte_identical_prefix() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
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
    let end = messages_prefix_end(&first.raw_body, 2);
    assert_eq!(&second.raw_body[..end], &first.raw_body[..end]);
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
    let end2 = messages_prefix_end(&second.raw_body, 5);
    let prefix2 = strip(&second.raw_body[..end2]);
    assert!(strip(&third.raw_body).starts_with(&prefix2));
    assert_eq!(
        third.raw_body[..end].matches("cache_control").count(),
        2,
        "system and tools keep theirs"
    );
}

#[tokio::test]
async fn build_refuses_a_claude_provider_without_max_tokens() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.max_tokens = None;
    let e = llm::build(&cfg).unwrap_err();
    assert!(e.to_string().contains("max_tokens"), "{e}");
}

#[tokio::test]
async fn a_held_reply_continues_after_release() {
    let fake = FakeLlm::start().await;
    let (script, release) = Script::hold("Held then released.");
    fake.push(script);
    let provider = llm::build(&config(&fake)).unwrap();
    let tools = tools();
    let messages = [Message::user_text("hi")];
    let mut stream = provider
        .stream(request(&messages, &tools, 0))
        .await
        .unwrap();
    use futures::StreamExt as _;
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, llm::StreamEvent::TextDelta(_)), "{first:?}");
    let waited = tokio::time::timeout(Duration::from_millis(200), stream.next()).await;
    assert!(waited.is_err(), "the reply must be held until released");
    release.release();
    let rest = drain(stream).await;
    assert_eq!(rest.response().message.text(), "Held then released.");
}

mod log_capture {
    //! A minimal `tracing` subscriber that keeps every event and span field as text.

    use std::fmt::Write as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// Captured log text, shared with the test.
    #[derive(Clone, Default)]
    pub struct Capture {
        pub lines: Arc<Mutex<Vec<String>>>,
        next: Arc<AtomicU64>,
    }

    struct Line(String);

    impl Visit for Line {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, " {}={:?}", field.name(), value);
        }
    }

    impl Capture {
        fn push(&self, target: &str, visit: impl FnOnce(&mut Line)) {
            let mut line = Line(target.to_owned());
            visit(&mut line);
            self.lines.lock().unwrap().push(line.0);
        }
    }

    impl Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            self.push(span.metadata().target(), |l| span.record(l));
            Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
        }
        fn record(&self, _: &Id, values: &Record<'_>) {
            self.push("record", |l| values.record(l));
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            self.push(event.metadata().target(), |l| event.record(l));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

#[tokio::test]
async fn the_key_and_header_values_never_reach_a_log_line() {
    let capture = log_capture::Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers.insert(
        "x-org-secret".into(),
        Secret::new("org-header-secret-value"),
    );
    cfg.stream_idle_timeout = Duration::from_millis(200);
    let provider = llm::build(&cfg).unwrap();
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    fake.push(Script::MidStreamError {
        text: "x".into(),
        error: HttpError::new(ErrorKind::Internal),
    });
    fake.push(Script::stall());
    fake.push(Script::text("fine"));
    for _ in 0..3 {
        call(&*provider, &[Message::user_text("hi")], 0)
            .await
            .error();
    }
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    let lines = capture.lines.lock().unwrap().clone();
    assert!(
        lines.iter().any(|l| l.contains("kernel_agentd")),
        "nothing was logged: {lines:?}"
    );
    for line in &lines {
        assert!(
            !line.contains(FAKE_KEY) && !line.contains("org-header-secret-value"),
            "leaked: {line}"
        );
    }
}
