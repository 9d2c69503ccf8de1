//! One turn at a time: busy refusals and their windows, status while busy, and a client that
//! disconnects mid-turn.

use std::time::{Duration, Instant};

use kernel_agentd::conversation::Role;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, next, rest, send, session_id, stored, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::wait::eventually;

fn busy(events: &[Event]) -> bool {
    match events {
        [Event::Busy(b)] => b.first_in_window,
        other => panic!("expected exactly one busy event, got {other:?}"),
    }
}

#[tokio::test]
async fn chat_while_busy_is_refused_at_once_first_flagged_per_window() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let (held, release) = Script::hold("first answer");
    fake.push(held);
    let mut first = send(&mut h.client, "one").await;
    until(&mut first, |e| matches!(e, Event::TextDelta(_))).await;

    let mut other = h.client().await;
    let t = Instant::now();
    assert!(
        busy(&rest(&mut send(&mut other, "two").await).await),
        "first refusal of the window"
    );
    assert!(
        !busy(&rest(&mut send(&mut other, "three").await).await),
        "second refusal is not flagged"
    );
    assert!(!busy(&rest(&mut send(&mut h.client, "four").await).await));
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "refusals are immediate"
    );

    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let running = status.running_turn.expect("a running turn");
    assert!(
        chrono::DateTime::parse_from_rfc3339(&running.started_at).is_ok(),
        "{}",
        running.started_at
    );
    assert!(
        h.client
            .list_sessions(pb::ListSessionsRequest {})
            .await
            .is_ok(),
        "listing never waits"
    );

    release.release();
    let events = rest(&mut first).await;
    assert_eq!(completed(&events).text, "first answer");
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.running_turn.is_none());

    let (held, release) = Script::hold("second answer");
    fake.push(held);
    let mut second = send(&mut h.client, "five").await;
    until(&mut second, |e| matches!(e, Event::TextDelta(_))).await;
    assert!(
        busy(&rest(&mut send(&mut other, "six").await).await),
        "a new window flags again"
    );
    release.release();
    assert_eq!(completed(&rest(&mut second).await).text, "second answer");
    assert_eq!(
        fake.requests().len(),
        2,
        "refused chats never reached the model"
    );
    h.stop().await;
}

#[tokio::test]
async fn many_concurrent_chats_run_exactly_one_turn() {
    let fake = FakeLlm::start().await;
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let (held, release) = Script::hold("the one");
    fake.push(held);
    let mut chats = tokio::task::JoinSet::new();
    for i in 0..8 {
        let mut client = h.client().await;
        chats.spawn(async move { rest(&mut send(&mut client, &format!("msg {i}")).await).await });
    }
    // The admitted turn is held by the fake, so the seven refusals finish first.
    let mut refusals = Vec::new();
    for _ in 0..7 {
        let events = chats.join_next().await.unwrap().unwrap();
        refusals.push(busy(&events));
    }
    assert_eq!(
        refusals.iter().filter(|first| **first).count(),
        1,
        "{refusals:?}"
    );
    release.release();
    let events = chats.join_next().await.unwrap().unwrap();
    assert_eq!(completed(&events).text, "the one");
    assert_eq!(fake.requests().len(), 1);
    h.stop().await;
}

#[tokio::test]
async fn a_client_disconnecting_does_not_cancel_the_turn() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let (held, release) = Script::hold("answer for nobody");
    fake.push(held);
    let mut stream = send(&mut h.client, "hello?").await;
    let Some(Event::Started(started)) = next(&mut stream).await else {
        panic!("started")
    };
    until(&mut stream, |e| matches!(e, Event::TextDelta(_))).await;
    drop(stream);
    release.release();

    eventually("the turn to finish", Duration::from_secs(10), async || {
        let status = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        status.running_turn.is_none()
    })
    .await;
    let history = stored(&h.cfg, started.session_id).await;
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(
        (history[1].role, history[1].text()),
        (Role::Assistant, "answer for nobody".to_owned())
    );

    fake.push(Script::text("still here"));
    let mut again = send(&mut h.client, "again").await;
    let events = rest(&mut again).await;
    assert_eq!(session_id(&events), started.session_id);
    assert_eq!(completed(&events).text, "still here");
    h.stop().await;
}
