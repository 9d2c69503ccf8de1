//! Cancel: mid-stream and mid-tool, for both provider kinds — `cancelled` arrives within a
//! second, tools see the token, and the next turn in the same session passes the strict fake.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Role};
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{KINDS, completed, rest, send, session_id, stored, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::test_tools::{Slow, with_tools};

const CANCEL_DEADLINE: Duration = Duration::from_secs(1);

async fn cancel(h: &mut Harness) -> bool {
    h.client
        .cancel(pb::CancelRequest::default())
        .await
        .unwrap()
        .into_inner()
        .cancelled
}

#[tokio::test]
async fn cancel_without_a_turn_says_so() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    assert!(!cancel(&mut h).await);
    h.stop().await;
}

#[tokio::test]
async fn cancel_mid_stream_is_prompt_and_the_session_stays_valid() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), "")).await;
        let (held, _release) = Script::hold("partial answer that never ends");
        fake.push(held);
        let mut stream = send(&mut h.client, "tell me a story").await;
        let Event::Started(started) = until(&mut stream, |e| matches!(e, Event::Started(_))).await
        else {
            unreachable!()
        };
        until(&mut stream, |e| matches!(e, Event::TextDelta(_))).await;

        let t = Instant::now();
        assert!(cancel(&mut h).await, "{kind}: a turn was running");
        let events = rest(&mut stream).await;
        assert!(
            t.elapsed() < CANCEL_DEADLINE,
            "{kind}: cancelled after {:?}",
            t.elapsed()
        );
        assert!(
            matches!(events.last(), Some(Event::Cancelled(_))),
            "{kind}: {events:?}"
        );

        let history = stored(&h.cfg, started.session_id).await;
        assert_eq!(history[0].text(), "tell me a story");
        if let Some(partial) = history.get(1) {
            assert_eq!(
                partial.role,
                Role::Assistant,
                "a partial answer is stored as the assistant's"
            );
            assert!("partial answer that never ends".starts_with(&partial.text()));
        }

        fake.push(Script::text("ok, shorter then"));
        let events = rest(&mut send(&mut h.client, "shorter please").await).await;
        assert_eq!(
            session_id(&events),
            started.session_id,
            "{kind}: same session"
        );
        assert_eq!(
            completed(&events).text,
            "ok, shorter then",
            "{kind}: accepted by the strict fake"
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn cancel_mid_tool_closes_every_call_and_the_session_stays_valid() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let slow = Arc::new(Slow::default());
        let cfg = TestConfig::with_kind(kind, &fake.url(), "");
        let mut h = Harness::start_with(cfg, with_tools(vec![slow.clone()])).await;
        fake.push(Script::tool_call("slow", "{}"));
        let mut stream = send(&mut h.client, "do the slow thing").await;
        let Event::ToolStarted(tool) =
            until(&mut stream, |e| matches!(e, Event::ToolStarted(_))).await
        else {
            unreachable!()
        };
        slow.started.notified().await;
        let status = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            status.running_turn.and_then(|r| r.running_tool).as_deref(),
            Some("slow"),
            "{kind}"
        );

        let t = Instant::now();
        assert!(cancel(&mut h).await);
        let events = rest(&mut stream).await;
        assert!(
            t.elapsed() < CANCEL_DEADLINE,
            "{kind}: cancelled after {:?}",
            t.elapsed()
        );
        assert!(
            matches!(events.last(), Some(Event::Cancelled(_))),
            "{kind}: {events:?}"
        );

        let status = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        let session = status.current_session.expect("a current session").id;
        let history = stored(&h.cfg, session).await;
        let last = history.last().expect("stored messages");
        assert!(
            matches!(&last.content[..], [Block::ToolResult { call_id, content, is_error: true }]
                if *call_id == tool.call_id && content == r#"{"error":"cancelled by the user"}"#),
            "{kind}: {history:?}"
        );
        assert!(
            slow.saw_cancel.load(Ordering::SeqCst),
            "{kind}: the tool saw its token"
        );

        fake.push(Script::text("cancelled, understood"));
        let events = rest(&mut send(&mut h.client, "never mind").await).await;
        assert_eq!(
            completed(&events).text,
            "cancelled, understood",
            "{kind}: accepted by the strict fake"
        );
        let next = fake.last_request().unwrap();
        assert!(
            next.raw_body.contains("cancelled by the user"),
            "{kind}: the model learns it was cancelled"
        );
        h.stop().await;
    }
}
