//! The `openai_compat` provider against the fake chat-completions API, when it fails: every
//! HTTP error class, non-standard error shapes, stalls, broken and cancelled streams, and
//! secrets kept out of errors and logs. Success paths: `provider_openai.rs`.

use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::llm::{self, LlmError};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind};
use serde_json::json;
use tests::fake_llm::{ErrorKind, FAKE_KEY, FakeLlm, HttpError, LogCapture, Script, drain};
use tests::provider_calls::http;
use tests::provider_calls::{
    assert_no_secret, assert_stream_error, call, hi_error, request, sample_tools,
};

fn config(fake: &FakeLlm) -> ProviderConfig {
    fake.provider_config(ProviderKind::OpenAiCompat)
}

/// A predicate on the error a case must produce.
type Check = fn(&LlmError) -> bool;

#[tokio::test]
async fn http_errors_are_typed_and_redacted() {
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers.insert(
        "OpenAI-Organization".into(),
        Secret::new("org-secret-header-value"),
    );
    let provider = llm::build(&cfg, &http()).unwrap();
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
        let e = hi_error(&*provider).await;
        assert!(expected(&e), "{kind:?} gave {e:?}");
        assert_no_secret(&e, &[FAKE_KEY, "org-secret-header-value"]);
    }
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    let e = hi_error(&*provider).await;
    assert!(
        e.to_string()
            .contains("Incorrect API key provided: sk-f…cdef"),
        "{e}"
    );
}

#[tokio::test]
async fn non_standard_error_shapes_and_missing_capabilities() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
        let e = hi_error(&*provider).await;
        assert!(expected(&e), "got {e:?}");
    }
}

#[tokio::test]
async fn stall_ends_with_stalled_within_the_idle_timeout() {
    for ping in [true, false] {
        let fake = FakeLlm::start().await;
        let mut cfg = config(&fake);
        cfg.stream_idle_timeout = Duration::from_millis(250);
        cfg.first_byte_timeout = Duration::from_millis(250);
        let provider = llm::build(&cfg, &http()).unwrap();
        fake.push(Script::Stall { ping });
        let started = Instant::now();
        let e = hi_error(&*provider).await;
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
    let provider = llm::build(&config(&fake), &http()).unwrap();
    fake.push(Script::MidStreamError {
        text: "partial".into(),
        error: HttpError::new(ErrorKind::Internal),
    });
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert_eq!(out.text(), "partial");
    assert!(matches!(out.error(), LlmError::Overloaded { .. }));
    fake.push(Script::raw_sse(
        "data: {\"error\":{\"message\":\"upstream exploded\"}}\n\n",
    ));
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "upstream exploded");
    fake.push(Script::AbruptClose {
        text: "cut off".into(),
    });
    let out = call(&*provider, &[Message::user_text("hi")], 0).await;
    assert_eq!(out.text(), "cut off");
    assert!(matches!(out.error(), LlmError::Stream { .. }));
    fake.push(Script::Truncated {
        text: "no finish".into(),
    });
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "finish_reason");
    fake.push(Script::raw_sse("data: {\"choices\": [oops\n\n"));
    let e = hi_error(&*provider).await;
    assert_stream_error(&e, "malformed JSON");
}

#[tokio::test]
async fn strict_fake_rejects_an_unanswered_tool_call() {
    let fake = FakeLlm::start().await;
    let provider = llm::build(&config(&fake), &http()).unwrap();
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
    let e = call(&*provider, &messages, 0).await.error();
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
    let provider = llm::build(&config(&fake), &http()).unwrap();
    let tools = sample_tools();
    let messages = [Message::user_text("hi")];
    let mut stream = provider
        .stream(request(&messages, &tools, 0))
        .await
        .unwrap();
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
    let mut stream = provider
        .stream(request(&messages, &tools, 0))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(llm::StreamEvent::TextDelta(_)))
    ));
    drop(stream);
    fake.push(Script::text("after cancel"));
    assert_eq!(
        call(&*provider, &messages, 0)
            .await
            .response()
            .message
            .text(),
        "after cancel"
    );
}

#[tokio::test]
async fn network_errors_and_log_lines_never_show_secrets() {
    let (capture, _guard) = LogCapture::install();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let fake = FakeLlm::start().await;
    let mut cfg = config(&fake);
    cfg.headers
        .insert("x-team".into(), Secret::new("team-header-secret"));
    let provider = llm::build(&cfg, &http()).unwrap();
    fake.push(HttpError::new(ErrorKind::Unauthorized));
    fake.push(Script::MidStreamError {
        text: "x".into(),
        error: HttpError::new(ErrorKind::Unauthorized),
    });
    for _ in 0..2 {
        let e = hi_error(&*provider).await;
        assert_no_secret(&e, &[FAKE_KEY, "team-header-secret"]);
    }
    cfg.api_base = format!("http://127.0.0.1:{port}/v1");
    let unreachable = llm::build(&cfg, &http()).unwrap();
    let e = hi_error(&*unreachable).await;
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
