//! The `claude` provider against the fake Anthropic Messages API: streaming, tool calls,
//! images, usage, prompt-cache breakpoints, every error class, stalls and broken streams.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Message, Role};
use kernel_agentd::llm::{self, LlmError, StopReason};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::{Value, json};
use tests::fake_llm::{
    ErrorKind, FAKE_KEY, FAKE_MODEL, FakeLlm, FakeToolCall, FakeUsage, HttpError, LogCapture,
    Reply, Script, drain,
};
use tests::provider_calls::http;
use tests::provider_calls::{
    SYSTEM, assert_no_secret, assert_stream_error, call, hi_error, request, sample_tools as tools,
};

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::Claude)
}

/// A predicate on the error a case must produce.
type Check = fn(&LlmError) -> bool;

#[tokio::test]
async fn plain_text_streams_in_deltas_with_the_documented_request() {
    let fake = FakeLlm::start().await;
    fake.push(Script::text("Hello from the fake Claude!"));
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
async fn usage_includes_cache_fields() {
    let fake = FakeLlm::start().await;
    let usage = FakeUsage {
        input: 21,
        output: 34,
        cache_read: 1800,
        cache_write: 250,
    };
    fake.push(Reply::text("ok").usage(usage));
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
    let provider = llm::build(&cfg, &http()).unwrap();
    let cases: Vec<(ErrorKind, Check)> = vec![
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
        let e = hi_error(&*provider).await;
        assert!(expected(&e), "{kind:?} gave {e:?}");
        assert_no_secret(&e, &[FAKE_KEY, "org-header-secret-value"]);
    }
    // The 401 message echoes the key: it must come back masked.
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    let e = hi_error(&*provider).await;
    assert!(e.to_string().contains("sk-f…cdef"), "{e}");
    // A provider message quoting a header value.
    fake.push(Script::raw_error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad header org-header-secret-value"}}"#,
    ));
    let e = hi_error(&*provider).await;
    assert!(e.to_string().contains("[REDACTED]"), "{e}");
    assert_no_secret(&e, &[FAKE_KEY, "org-header-secret-value"]);
}

#[tokio::test]
async fn capability_and_unknown_shapes() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    fake.push(Script::raw_error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"This model does not support image input"}}"#,
    ));
    let e = hi_error(&*provider).await;
    assert!(matches!(e, LlmError::CapabilityMissing { .. }), "{e:?}");
    assert!(e.to_string().contains("switch provider or model"), "{e}");
    fake.push(Script::Raw {
        status: 502,
        content_type: "text/html".into(),
        body: "<html>Bad gateway</html>".into(),
        headers: vec![],
    });
    let e = hi_error(&*provider).await;
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
    let provider = llm::build(&cfg, &http()).unwrap();
    let e = hi_error(&*provider).await;
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
        cfg.first_byte_timeout = Duration::from_millis(300);
        let provider = llm::build(&cfg, &http()).unwrap();
        fake.push(Script::Stall { ping });
        let started = Instant::now();
        let e = hi_error(&*provider).await;
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
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "api_error");
}

#[tokio::test]
async fn abrupt_close_and_truncated_streams_are_errors() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
    fake.push(Script::AbruptClose {
        text: "Half a sen".into(),
    });
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert_eq!(out.text(), "Half a sen");
    assert!(matches!(out.error(), LlmError::Stream { .. }));
    fake.push(Script::Truncated {
        text: "Half".into(),
    });
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "message_stop");
    fake.push(Script::raw_sse("event: message_start\ndata: {not json\n\n"));
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "malformed JSON");
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
    let provider = llm::build(&cfg, &http()).unwrap();
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
async fn a_held_reply_continues_after_release() {
    let fake = FakeLlm::start().await;
    let (script, release) = Script::hold("Held then released.");
    fake.push(script);
    let provider = llm::build(&config(&fake), &http()).unwrap();
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

#[tokio::test]
async fn the_key_and_header_values_never_reach_a_log_line() {
    let (capture, _guard) = LogCapture::install();
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers.insert(
        "x-org-secret".into(),
        Secret::new("org-header-secret-value"),
    );
    cfg.stream_idle_timeout = Duration::from_millis(200);
    let provider = llm::build(&cfg, &http()).unwrap();
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    fake.push(Script::MidStreamError {
        text: "x".into(),
        error: HttpError::new(ErrorKind::Internal),
    });
    fake.push(Script::stall());
    fake.push(Script::text("fine"));
    for _ in 0..3 {
        hi_error(&*provider).await;
    }
    call(&*provider, &[Message::user_text("hi")], 0)
        .await
        .response();
    let lines = capture.lines();
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

#[tokio::test(start_paused = true)]
async fn stall_with_the_default_idle_timeout_in_paused_time() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.stream_idle_timeout = Duration::from_secs(120);
    let provider = llm::build(&cfg, &http()).unwrap();
    fake.push(Script::stall());
    let started = tokio::time::Instant::now();
    let e = hi_error(&*provider).await;
    assert_eq!(
        e,
        LlmError::Stalled {
            after: Duration::from_secs(120)
        }
    );
    assert!(started.elapsed() >= Duration::from_secs(120));
}
