//! The `openai_compat` provider against the fake chat-completions API: streaming, tool calls
//! from interleaved fragments, images, usage, the quirks of compatible servers, every error
//! class, stalls and broken streams.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Message, Role, ToolSpec};
use kernel_agentd::llm::{self, LlmError, ModelRequest, Provider, StopReason};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::{Value, json};
use tests::fake_llm::{
    Drained, ErrorKind, FAKE_KEY, FAKE_MODEL, FakeLlm, FakeToolCall, FakeUsage, HttpError, Quirks,
    Reply, Script, drain,
};

const SYSTEM: &str = "You are Kernel.";

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::OpenAiCompat)
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Weather for a city.".into(),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        },
        ToolSpec {
            name: "get_time".into(),
            description: "The time.".into(),
            input_schema: json!({"type": "object"}),
        },
    ]
}

async fn call(provider: &dyn Provider, messages: &[Message]) -> Drained {
    let tools = tools();
    let request = ModelRequest {
        model: FAKE_MODEL,
        system: SYSTEM,
        tools: &tools,
        messages,
        stable_prefix: 0,
    };
    match provider.stream(request).await {
        Ok(stream) => drain(stream).await,
        Err(e) => Drained {
            events: Vec::new(),
            result: Err(e),
        },
    }
}

/// A predicate on the error a case must produce.
type Check = fn(&LlmError) -> bool;

fn assert_no_secret(e: &LlmError, secrets: &[&str]) {
    for text in [e.to_string(), format!("{e:?}")] {
        for secret in secrets {
            assert!(!text.contains(secret), "secret leaked in {text}");
        }
    }
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
    let provider = llm::build(&config(&fake)).unwrap();
    let out = call(&*provider, &[Message::user_text("hi")]).await;
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
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
    );
}

#[tokio::test]
async fn max_tokens_is_sent_when_configured() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.max_tokens = Some(333);
    let provider = llm::build(&cfg).unwrap();
    call(&*provider, &[Message::user_text("hi")])
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
    let provider = llm::build(&config(&fake)).unwrap();
    let mut messages = vec![Message::user_text("weather?")];
    let out = call(&*provider, &messages).await;
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
        call(&*provider, &messages).await.response().message.text(),
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
    let provider = llm::build(&config(&fake)).unwrap();
    let out = call(&*provider, &[Message::user_text("go")]).await;
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
    let provider = llm::build(&config(&fake)).unwrap();
    let response = call(&*provider, &[Message::user_text("go")])
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
    let provider = llm::build(&config(&fake)).unwrap();
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
    call(&*provider, &[message]).await.response();
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
    let provider = llm::build(&config(&fake)).unwrap();
    let usage = FakeUsage {
        input: 40,
        output: 9,
        cache_read: 1000,
        cache_write: 0,
    };
    fake.push(Reply::text("ok").usage(usage));
    let u = call(&*provider, &[Message::user_text("hi")])
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
    let u = call(&*provider, &[Message::user_text("hi")])
        .await
        .response()
        .usage;
    assert_eq!((u.input_tokens, u.cache_read_tokens), (40, 1000));
    let quirks = Quirks {
        no_usage: true,
        ..Quirks::default()
    };
    fake.push(Reply::text("ok").usage(usage).quirks(quirks));
    let u = call(&*provider, &[Message::user_text("hi")])
        .await
        .response()
        .usage;
    assert_eq!(u, Default::default());
}

#[tokio::test]
async fn tolerates_no_done_empty_choices_and_stop_with_tool_calls() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    let quirks = Quirks {
        no_done: true,
        empty_choices_chunk: true,
        ..Quirks::default()
    };
    fake.push(Reply::text("no done marker").quirks(quirks));
    let started = Instant::now();
    assert_eq!(
        call(&*provider, &[Message::user_text("hi")])
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
    let response = call(&*provider, &[Message::user_text("hi")])
        .await
        .response();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    fake.push(Reply::text("cut").stop_reason("length"));
    assert_eq!(
        call(&*provider, &[Message::user_text("hi")])
            .await
            .response()
            .stop_reason,
        StopReason::MaxTokens
    );
}

#[tokio::test]
async fn reasoning_content_is_kept_and_sent_back_only_with_tool_calls() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    fake.push(
        Reply::default()
            .thinking("I should call get_time.", "")
            .tool(FakeToolCall::new("get_time", "{}").id("call_r")),
    );
    fake.push(Reply::text("It is noon.").thinking("Answer now.", ""));
    let mut messages = vec![Message::user_text("time?")];
    let first = call(&*provider, &messages).await.response();
    assert_eq!(
        first.message.content[0],
        Block::Reasoning {
            provider: "openai_compat".into(),
            data: json!({"reasoning_content": "I should call get_time."})
        }
    );
    messages.push(first.message);
    messages.push(tool_result("call_r", "12:00"));
    let second = call(&*provider, &messages).await.response();
    let sent = fake.last_request().unwrap().body["messages"].clone();
    assert_eq!(sent[2]["reasoning_content"], "I should call get_time.");
    messages.push(second.message);
    messages.push(Message::user_text("thanks"));
    call(&*provider, &messages).await.response();
    let sent = fake.last_request().unwrap().body["messages"].clone();
    assert_eq!(
        sent[4],
        json!({"role": "assistant", "content": "It is noon."}),
        "no reasoning without tool calls"
    );
}

#[tokio::test]
async fn http_errors_are_typed_and_redacted() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers.insert(
        "OpenAI-Organization".into(),
        Secret::new("org-secret-header-value"),
    );
    let provider = llm::build(&cfg).unwrap();
    let cases: Vec<(ErrorKind, Check)> = vec![
        (ErrorKind::Unauthorized, |e| {
            matches!(e, LlmError::Authentication { status: 401, .. })
        }),
        (ErrorKind::Forbidden, |e| {
            matches!(e, LlmError::Authentication { status: 403, .. })
        }),
        (ErrorKind::BadRequest, |e| {
            matches!(e, LlmError::BadRequest { status: 400, .. })
        }),
        (ErrorKind::PromptTooLong, |e| {
            matches!(e, LlmError::ContextTooLong { .. })
        }),
        (
            ErrorKind::RateLimited { retry_after: 3 },
            |e| matches!(e, LlmError::RateLimited { retry_after: Some(d), .. } if *d == Duration::from_secs(3)),
        ),
        (ErrorKind::Internal, |e| {
            matches!(e, LlmError::Overloaded { status: 500, .. })
        }),
        (ErrorKind::Overloaded, |e| {
            matches!(e, LlmError::Overloaded { status: 503, .. })
        }),
        (ErrorKind::NotFound, |e| {
            matches!(e, LlmError::BadRequest { status: 404, .. })
        }),
    ];
    for (kind, expected) in cases {
        fake.push(HttpError::new(kind));
        let e = call(&*provider, &[Message::user_text("hi")]).await.error();
        assert!(expected(&e), "{kind:?} gave {e:?}");
        assert_no_secret(&e, &[FAKE_KEY, "org-secret-header-value"]);
    }
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    let e = call(&*provider, &[Message::user_text("hi")]).await.error();
    assert!(
        e.to_string()
            .contains("Incorrect API key provided: sk-f…cdef"),
        "{e}"
    );
}

#[tokio::test]
async fn non_standard_error_shapes_and_missing_capabilities() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    let cases: Vec<(Script, Check)> = vec![
        (
            Script::raw_error(400, r#"{"error":"model is required"}"#),
            |e| matches!(e, LlmError::BadRequest { message, .. } if message == "model is required"),
        ),
        (
            Script::raw_error(422, r#"{"detail":"Unprocessable"}"#),
            |e| matches!(e, LlmError::BadRequest { status: 422, message } if message == "Unprocessable"),
        ),
        (
            Script::raw_error(
                400,
                r#"{"error":{"message":"this model does not support tools"}}"#,
            ),
            |e| matches!(e, LlmError::CapabilityMissing { .. }),
        ),
        (Script::raw_error(404, "404 page not found"), |e| {
            matches!(e, LlmError::CapabilityMissing { .. })
        }),
        (
            Script::raw_error(200, r#"{"id":"x","object":"chat.completion","choices":[]}"#),
            |e| matches!(e, LlmError::CapabilityMissing { message } if message.contains("streaming")),
        ),
    ];
    for (script, expected) in cases {
        fake.push(script);
        let e = call(&*provider, &[Message::user_text("hi")]).await.error();
        assert!(expected(&e), "got {e:?}");
    }
}

#[tokio::test]
async fn stall_ends_with_stalled_within_the_idle_timeout() {
    for ping in [true, false] {
        let fake = FakeLlm::start().await;
        let mut cfg = config(&fake);
        cfg.stream_idle_timeout = Duration::from_millis(250);
        let provider = llm::build(&cfg).unwrap();
        fake.push(Script::Stall { ping });
        let started = Instant::now();
        let e = call(&*provider, &[Message::user_text("hi")]).await.error();
        assert_eq!(
            e,
            LlmError::Stalled {
                after: Duration::from_millis(250)
            }
        );
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}

#[tokio::test]
async fn mid_stream_errors_abrupt_close_and_malformed_chunks() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    fake.push(Script::MidStreamError {
        text: "partial".into(),
        error: HttpError::new(ErrorKind::Internal),
    });
    let out = call(&*provider, &[Message::user_text("hi")]).await;
    assert_eq!(out.text(), "partial");
    assert!(matches!(out.error(), LlmError::Overloaded { .. }));
    fake.push(Script::raw_sse(
        "data: {\"error\":{\"message\":\"upstream exploded\"}}\n\n",
    ));
    let e = call(&*provider, &[Message::user_text("hi")]).await.error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("upstream exploded")),
        "{e:?}"
    );
    fake.push(Script::AbruptClose {
        text: "cut off".into(),
    });
    let out = call(&*provider, &[Message::user_text("hi")]).await;
    assert_eq!(out.text(), "cut off");
    assert!(matches!(out.error(), LlmError::Stream { .. }));
    fake.push(Script::Truncated {
        text: "no finish".into(),
    });
    let e = call(&*provider, &[Message::user_text("hi")]).await.error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("finish_reason")),
        "{e:?}"
    );
    fake.push(Script::raw_sse("data: {\"choices\": [oops\n\n"));
    let e = call(&*provider, &[Message::user_text("hi")]).await.error();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("malformed JSON")),
        "{e:?}"
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
    let provider = llm::build(&cfg).unwrap();
    call(&*provider, &[Message::user_text("hi")])
        .await
        .response();
    let req = fake.last_request().unwrap();
    assert_eq!(req.path, "/chat/completions");
    assert_eq!(req.header("http-referer"), Some("https://kernel.example"));
    assert!(!format!("{provider:?}").contains(FAKE_KEY));
}

#[tokio::test]
async fn strict_fake_rejects_an_unanswered_tool_call() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake)).unwrap();
    let messages = vec![
        Message::user_text("a"),
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolCall {
                id: "call_x".into(),
                name: "get_time".into(),
                input: json!({}),
            }],
        },
        Message::user_text("b"),
    ];
    let e = call(&*provider, &messages).await.error();
    assert!(
        matches!(&e, LlmError::BadRequest { status: 400, message } if message.contains("call_x")),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_held_reply_continues_after_release_and_a_dropped_stream_ends_the_call() {
    use futures::StreamExt as _;
    let fake = FakeLlm::start().await;
    let (script, release) = Script::hold("Held then released.");
    fake.push(script);
    let (script, _never) = Script::hold("Never released.");
    fake.push(script);
    let provider = llm::build(&config(&fake)).unwrap();
    let tools = tools();
    let messages = [Message::user_text("hi")];
    let request = || ModelRequest {
        model: FAKE_MODEL,
        system: SYSTEM,
        tools: &tools,
        messages: &messages,
        stable_prefix: 0,
    };
    let mut stream = provider.stream(request()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(llm::StreamEvent::TextDelta(_)))
    ));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stream.next())
            .await
            .is_err(),
        "held"
    );
    release.release();
    assert_eq!(
        drain(stream).await.response().message.text(),
        "Held then released."
    );
    // Cancelling: dropping a held stream returns at once, and the provider stays usable.
    let mut stream = provider.stream(request()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(llm::StreamEvent::TextDelta(_)))
    ));
    drop(stream);
    fake.push(Script::text("after cancel"));
    assert_eq!(
        call(&*provider, &messages).await.response().message.text(),
        "after cancel"
    );
}

#[tokio::test]
async fn network_errors_and_log_lines_never_show_secrets() {
    let (capture, _guard) = tests::fake_llm::LogCapture::install();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers
        .insert("x-team".into(), Secret::new("team-header-secret"));
    let provider = llm::build(&cfg).unwrap();
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    fake.push(Script::MidStreamError {
        text: "x".into(),
        error: HttpError::new(ErrorKind::Unauthorized),
    });
    for _ in 0..2 {
        let e = call(&*provider, &[Message::user_text("hi")]).await.error();
        assert_no_secret(&e, &[FAKE_KEY, "team-header-secret"]);
    }
    cfg.api_base = format!("http://127.0.0.1:{port}/v1");
    let unreachable = llm::build(&cfg).unwrap();
    let e = call(&*unreachable, &[Message::user_text("hi")])
        .await
        .error();
    assert!(matches!(e, LlmError::Network { .. }), "{e:?}");
    assert_no_secret(&e, &[FAKE_KEY, "team-header-secret"]);
    let lines = capture.lines();
    assert!(
        lines.iter().any(|l| l.contains("kernel_agentd")),
        "nothing was logged"
    );
    for line in &lines {
        assert!(
            !line.contains(FAKE_KEY) && !line.contains("team-header-secret"),
            "leaked: {line}"
        );
    }
}
