//! Provider errors end the turn with `failed` (the provider's words, redacted), are recorded as
//! the last error, never leak the key (events, status, logs), and leave the session usable.

use kernel_agentd::conversation::Role;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{KINDS, completed, session_id, stored, turn};
use tests::config::{PROVIDER_KEY, TestConfig};
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, LogCapture, Script};
use tests::harness::Harness;

fn failed(events: &[Event]) -> String {
    match events.last() {
        Some(Event::Failed(f)) => f.message.clone(),
        _ => panic!("the turn did not fail: {events:?}"),
    }
}

#[tokio::test]
async fn provider_errors_fail_the_turn_redacted_and_the_session_recovers() {
    let (logs, _guard) = LogCapture::install();
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), "")).await;

        fake.push(HttpError::new(ErrorKind::Unauthorized));
        let events = turn(&mut h.client, "hello").await;
        let message = failed(&events);
        assert!(
            message.starts_with("authentication failed (401)"),
            "{kind}: {message}"
        );
        // The reason for the owner's client, next to the English message (its args redacted).
        let Some(Event::Failed(f)) = events.last() else {
            unreachable!()
        };
        assert_eq!(
            (f.reason.as_str(), f.args.get("status").map(String::as_str)),
            ("MODEL_AUTH", Some("401")),
            "{kind}"
        );
        let all = format!("{events:?}");
        assert!(
            !all.contains(PROVIDER_KEY),
            "{kind}: the key leaked into events: {all}"
        );

        let status = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            status.last_error.as_deref(),
            Some(message.as_str()),
            "{kind}"
        );
        assert!(status.running_turn.is_none());
        assert!(
            !format!("{status:?}").contains(PROVIDER_KEY),
            "{kind}: the key leaked into GetStatus"
        );

        let sid = session_id(&events);
        let history = stored(&h.cfg, sid).await;
        assert_eq!(history.len(), 1, "{kind}: the user message stays stored");
        assert_eq!(
            (history[0].role, history[0].text()),
            (Role::User, "hello".to_owned())
        );

        fake.push(Script::MidStreamError {
            text: "half an ans".into(),
            error: HttpError::new(ErrorKind::Overloaded),
        });
        let events = turn(&mut h.client, "again").await;
        let message = failed(&events);
        assert!(
            message.contains("overloaded") || message.contains("unavailable"),
            "{kind}: {message}"
        );

        fake.push(HttpError::new(ErrorKind::Internal));
        let message = failed(&turn(&mut h.client, "and again").await);
        assert!(
            message.starts_with("provider unavailable (500)"),
            "{kind}: {message}"
        );

        fake.push(Script::text("back to normal"));
        let events = turn(&mut h.client, "third time").await;
        assert_eq!(
            completed(&events).text,
            "back to normal",
            "{kind}: the strict fake accepts the history"
        );
        assert_eq!(session_id(&events), sid);
        let last = fake.last_request().unwrap().raw_body;
        assert!(
            last.contains("hello") && last.contains("third time"),
            "{kind}: dangling user messages merged"
        );
        h.stop().await;
    }
    let lines = logs.lines();
    assert!(
        lines.iter().any(|l| l.contains("turn failed")),
        "the failure is logged"
    );
    let leaked: Vec<&String> = lines.iter().filter(|l| l.contains(PROVIDER_KEY)).collect();
    assert!(leaked.is_empty(), "the key leaked into logs: {leaked:?}");
}

#[tokio::test]
async fn a_stalled_stream_ends_the_turn_instead_of_hanging_it() {
    let fake = FakeLlm::start().await;
    let extra = "";
    let cfg = TestConfig::new(&fake.url(), extra);
    cfg.rewrite(|t| {
        t.replace(
            "max_tokens = 1024",
            "max_tokens = 1024\nstream_idle_timeout_secs = 1\nfirst_byte_timeout_secs = 1",
        )
    });
    let mut h = Harness::start(cfg).await;
    fake.push(Script::stall());
    let message = failed(&turn(&mut h.client, "hello").await);
    assert!(message.starts_with("stream stalled"), "{message}");
    h.stop().await;
}
