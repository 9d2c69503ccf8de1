//! The turn loop through the real gRPC service against the fake LLM, for both provider kinds:
//! plain answers, tool round trips, the 25-call cap, unknown tools, and input validation.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use kernel_agentd::conversation::{Block, Role};
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{KINDS, completed, session_id, stored, streamed_text, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::harness::Harness;
use tests::test_tools::{Echo, with_tools};
use tonic::Code;

async fn start(kind: &str, fake: &FakeLlm, echo: &Arc<Echo>) -> Harness {
    let ext = with_tools(vec![echo.clone()]);
    Harness::start_with(TestConfig::with_kind(kind, &fake.url(), ""), ext).await
}

#[tokio::test]
async fn plain_answer_streams_deltas_then_completes_and_is_stored() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = start(kind, &fake, &Arc::default()).await;
        fake.push(Script::text("你好，我是 Kernel。有什么可以帮你？"));
        let events = turn(&mut h.client, "你好").await;

        assert!(
            matches!(events.first(), Some(Event::Started(s)) if !s.turn_id.is_empty()),
            "{events:?}"
        );
        let deltas = events
            .iter()
            .filter(|e| matches!(e, Event::TextDelta(_)))
            .count();
        assert!(deltas > 1, "{kind}: streamed in several deltas: {events:?}");
        let done = completed(&events);
        assert_eq!(done.text, "你好，我是 Kernel。有什么可以帮你？");
        assert_eq!(streamed_text(&events), done.text);
        let usage = done.usage.unwrap();
        assert!(
            usage.input_tokens > 0 && usage.output_tokens > 0,
            "{kind}: {usage:?}"
        );

        let history = stored(&h.cfg, session_id(&events)).await;
        assert_eq!(history.len(), 2, "{kind}: {history:?}");
        assert_eq!(
            (history[0].role, history[0].text()),
            (Role::User, "你好".to_owned())
        );
        assert_eq!(
            (history[1].role, history[1].text()),
            (Role::Assistant, done.text.clone())
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn a_tool_call_round_trips_and_the_second_request_carries_the_result() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let echo = Arc::new(Echo::default());
        let mut h = start(kind, &fake, &echo).await;
        fake.push(
            Reply::text("我查一下。").tool(FakeToolCall::new("echo", r#"{"text":"ping-42"}"#)),
        );
        fake.push(Script::text("结果是 ping-42。"));
        let events = turn(&mut h.client, "echo ping-42").await;

        assert_eq!(completed(&events).text, "结果是 ping-42。");
        assert_eq!(echo.calls.load(Ordering::SeqCst), 1);
        let started = events.iter().find_map(|e| {
            if let Event::ToolStarted(t) = e {
                Some(t)
            } else {
                None
            }
        });
        let started = started.expect("tool_started");
        assert_eq!(
            (started.tool_name.as_str(), started.input_summary.as_str()),
            ("echo", r#"{"text":"ping-42"}"#)
        );
        let finished = events.iter().find_map(|e| {
            if let Event::ToolFinished(t) = e {
                Some(t)
            } else {
                None
            }
        });
        let finished = finished.expect("tool_finished");
        assert_eq!(
            (
                finished.call_id.as_str(),
                finished.ok,
                finished.summary.as_str()
            ),
            (started.call_id.as_str(), true, "echo: ping-42")
        );

        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "{kind}");
        assert!(!requests[0].raw_body.contains("echo: ping-42"));
        assert!(
            requests[1].raw_body.contains("echo: ping-42"),
            "{kind}: {}",
            requests[1].raw_body
        );
        assert!(requests[1].raw_body.contains(&started.call_id));

        let history = stored(&h.cfg, session_id(&events)).await;
        let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![Role::User, Role::Assistant, Role::User, Role::Assistant],
            "{kind}"
        );
        assert!(
            matches!(&history[2].content[..], [Block::ToolResult { content, is_error: false, .. }] if content == "echo: ping-42")
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn twenty_six_requested_calls_stop_at_twenty_five_with_a_final_answer() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let echo = Arc::new(Echo::default());
        let mut h = start(kind, &fake, &echo).await;
        for step in 0..13 {
            let a = FakeToolCall::new("echo", format!(r#"{{"text":"{}"}}"#, 2 * step));
            let b = FakeToolCall::new("echo", format!(r#"{{"text":"{}"}}"#, 2 * step + 1));
            fake.push(Reply::default().tool(a).tool(b));
        }
        fake.push(Script::text("我在 25 次工具调用后停下了。"));
        let events = turn(&mut h.client, "keep calling tools").await;

        assert_eq!(
            completed(&events).text,
            "我在 25 次工具调用后停下了。",
            "{kind}"
        );
        assert_eq!(echo.calls.load(Ordering::SeqCst), 25, "{kind}");
        let started = events
            .iter()
            .filter(|e| matches!(e, Event::ToolStarted(_)))
            .count();
        assert_eq!(started, 25);
        let requests = fake.requests();
        assert_eq!(
            requests.len(),
            14,
            "{kind}: 13 tool steps and the final call"
        );
        assert!(
            requests[..13]
                .iter()
                .all(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty()))
        );
        let last = &requests[13];
        assert!(
            last.body["tools"].as_array().is_none_or(|t| t.is_empty()),
            "{kind}: no tools at the cap"
        );
        assert!(
            last.raw_body.contains("工具调用已达上限"),
            "{kind}: the final call says why"
        );
        assert!(
            last.raw_body.contains("limit of 25 tool calls"),
            "{kind}: the 26th call was answered, not run"
        );

        let history = stored(&h.cfg, session_id(&events)).await;
        assert!(
            !history
                .iter()
                .any(|m| m.text().contains("工具调用已达上限")),
            "the instruction is not stored"
        );
        assert_eq!(
            history.last().map(|m| m.text()),
            Some("我在 25 次工具调用后停下了。".to_owned())
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn unknown_tools_and_bad_input_become_error_results_not_failures() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let echo = Arc::new(Echo::default());
        let mut h = start(kind, &fake, &echo).await;
        let reply = Reply::default()
            .tool(FakeToolCall::new("no_such_tool", "{}"))
            .tool(FakeToolCall::new("echo", r#"{"text": 5}"#));
        fake.push(reply);
        fake.push(Script::text("两个工具都失败了。"));
        let events = turn(&mut h.client, "try tools").await;

        assert_eq!(
            completed(&events).text,
            "两个工具都失败了。",
            "{kind}: {events:?}"
        );
        let finished: Vec<&pb::ToolFinished> = events
            .iter()
            .filter_map(|e| {
                if let Event::ToolFinished(t) = e {
                    Some(t)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(finished.len(), 2);
        assert!(finished.iter().all(|f| !f.ok));
        assert_eq!(echo.calls.load(Ordering::SeqCst), 0);
        let second = &fake.requests()[1].raw_body;
        assert!(
            second.contains("unknown tool") && second.contains("invalid input for echo"),
            "{second}"
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn max_tokens_without_tool_calls_is_a_final_answer() {
    let fake = FakeLlm::start().await;
    let mut h = start("claude", &fake, &Arc::default()).await;
    fake.push(Reply::text("这是被截断的回").stop_reason("max_tokens"));
    let events = turn(&mut h.client, "long answer please").await;
    assert_eq!(completed(&events).text, "这是被截断的回");
    h.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_before_any_model_call() {
    let fake = FakeLlm::start().await;
    let mut h = start("claude", &fake, &Arc::default()).await;
    let refuse = |text: String, attachments: Vec<pb::Attachment>| pb::ChatRequest {
        text,
        attachments,
        ..Default::default()
    };
    let image = |mime: &str, len: usize| pb::Attachment {
        kind: Some(pb::attachment::Kind::Image(pb::Image {
            data: vec![1; len],
            mime_type: mime.into(),
        })),
    };
    let doc = pb::Attachment {
        kind: Some(pb::attachment::Kind::Document(pb::Document {
            data: b"%PDF-1.7".to_vec(),
            file_name: "a.pdf".into(),
        })),
    };
    let cases = [
        (refuse(String::new(), vec![]), Code::InvalidArgument),
        (refuse(" \n\t".into(), vec![]), Code::InvalidArgument),
        (refuse("x".repeat(100_001), vec![]), Code::InvalidArgument),
        (
            refuse("look".into(), vec![image("image/bmp", 4)]),
            Code::InvalidArgument,
        ),
        (
            refuse("look".into(), vec![pb::Attachment { kind: None }]),
            Code::InvalidArgument,
        ),
        (refuse("read".into(), vec![doc]), Code::InvalidArgument),
    ];
    for (req, code) in cases {
        let err = h.client.chat(req).await.expect_err("refused");
        assert_eq!(err.code(), code, "{}", err.message());
    }
    assert!(
        fake.requests().is_empty(),
        "no model call for refused input"
    );

    let ok = h.client.chat(refuse("x".repeat(100_000), vec![])).await;
    assert!(ok.is_ok(), "exactly the limit is accepted");
    h.stop().await;
}
