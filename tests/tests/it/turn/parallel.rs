//! Parallel turns (issue 46): `Chat` naming a session runs beside the turns of other sessions,
//! one turn per session, at most `general.max_parallel_turns` at once; `Cancel` of one session
//! leaves the other running; `GetStatus` lists every running turn with its session.

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use std::time::Duration;
use tests::chat::{completed, rest, store_message, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;

use tonic::Code;
use tonic::Streaming;
use tonic::transport::Channel;

use kernel_proto::v1::agent_client::AgentClient;

/// A new session with one stored message (so the next `NewSession` makes another).
async fn new_session(h: &mut Harness) -> i64 {
    let s = h
        .client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap()
        .into_inner();
    let id = s.session.expect("a session").id;
    store_message(&h.cfg, id, &format!("earlier in {id}")).await;
    id
}

async fn send_in(
    client: &mut AgentClient<Channel>,
    session_id: Option<i64>,
    text: &str,
) -> Streaming<pb::ChatEvent> {
    client
        .chat(pb::ChatRequest {
            text: text.into(),
            session_id,
            ..Default::default()
        })
        .await
        .expect("Chat accepted")
        .into_inner()
}

fn with_cap(cfg: &TestConfig, cap: u32) {
    cfg.rewrite(|t| {
        t.replacen(
            "[general]\n",
            &format!("[general]\nmax_parallel_turns = {cap}\n"),
            1,
        )
    });
}

async fn running_sessions(client: &mut AgentClient<Channel>) -> Vec<i64> {
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let mut sessions: Vec<i64> = status.running_turns.iter().map(|r| r.session_id).collect();
    sessions.sort_unstable();
    sessions
}

#[tokio::test]
async fn two_sessions_run_at_once_and_cancelling_one_leaves_the_other() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let a = new_session(&mut h).await;
    let b = new_session(&mut h).await;
    let (held_a, _release_a) = Script::hold("alpha answer");
    let (held_b, release_b) = Script::hold("beta answer");
    fake.push(held_a);
    fake.push(held_b);

    let mut in_a = send_in(&mut h.client, Some(a), "alpha question").await;
    until(&mut in_a, |e| matches!(e, Event::TextDelta(_))).await;
    let mut other = h.client().await;
    // Session B's turn starts while A's streams: no busy refusal.
    let mut in_b = send_in(&mut other, Some(b), "beta question").await;
    until(&mut in_b, |e| matches!(e, Event::TextDelta(_))).await;
    // One turn per session: A is busy.
    let again = rest(&mut send_in(&mut h.client, Some(a), "alpha again").await).await;
    assert!(
        matches!(again.as_slice(), [Event::Busy(_)]),
        "a second turn in the same session is refused: {again:?}"
    );
    let mut both = vec![a, b];
    both.sort_unstable();
    assert_eq!(running_sessions(&mut h.client).await, both);

    // Cancelling A's session ends A's turn only.
    let cancelled = h
        .client
        .cancel(pb::CancelRequest {
            session_id: Some(a),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(cancelled.cancelled);
    let a_events = rest(&mut in_a).await;
    assert!(
        matches!(a_events.last(), Some(Event::Cancelled(_))),
        "{a_events:?}"
    );
    assert_eq!(running_sessions(&mut h.client).await, vec![b]);
    release_b.release();
    let b_events = rest(&mut in_b).await;
    assert_eq!(completed(&b_events).text, "beta answer");

    // B's request never saw A's conversation, and each answer is stored in its session.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].raw_body.contains("alpha question"));
    assert!(requests[1].raw_body.contains("beta question"));
    assert!(
        !requests[1].raw_body.contains("alpha"),
        "B's request holds A's messages"
    );
    let stored_b = tests::chat::stored(&h.cfg, b).await;
    assert!(format!("{stored_b:?}").contains("beta answer"));
    assert!(!format!("{:?}", tests::chat::stored(&h.cfg, a).await).contains("beta"));
    assert!(running_sessions(&mut h.client).await.is_empty());
}

#[tokio::test]
async fn beyond_max_parallel_turns_a_message_waits_for_a_slot_instead_of_busy() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), "");
    with_cap(&cfg, 1);
    let mut h = Harness::start(cfg).await;
    let a = new_session(&mut h).await;
    let b = new_session(&mut h).await;
    let (held, release) = Script::hold("first");
    fake.push(held);
    fake.push(Script::text("second"));

    let mut in_a = send_in(&mut h.client, Some(a), "one").await;
    until(&mut in_a, |e| matches!(e, Event::TextDelta(_))).await;
    let mut other = h.client().await;
    let waiting = tokio::spawn(async move {
        let mut in_b = send_in(&mut other, Some(b), "two").await;
        rest(&mut in_b).await
    });
    // B waits: only A runs, and the model saw one request.
    assert_eq!(running_sessions(&mut h.client).await, vec![a]);
    assert_eq!(fake.requests().len(), 1);
    release.release();
    assert_eq!(completed(&rest(&mut in_a).await).text, "first");
    let b_events = waiting.await.unwrap();
    assert!(
        !b_events.iter().any(|e| matches!(e, Event::Busy(_))),
        "{b_events:?}"
    );
    assert_eq!(completed(&b_events).text, "second");
}

#[tokio::test]
async fn a_chat_naming_an_unknown_session_is_not_found_and_the_main_lane_is_unchanged() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let err = h
        .client
        .chat(pb::ChatRequest {
            text: "hello".into(),
            session_id: Some(987_654),
            ..Default::default()
        })
        .await
        .expect_err("an unknown session");
    assert_eq!(err.code(), Code::NotFound);
    assert!(fake.requests().is_empty());
    // Without a session id, one turn at a time as before.
    let (held, release) = Script::hold("main answer");
    fake.push(held);
    let mut first = send_in(&mut h.client, None, "one").await;
    until(&mut first, |e| matches!(e, Event::TextDelta(_))).await;
    let refused = rest(&mut send_in(&mut h.client, None, "two").await).await;
    assert!(
        matches!(refused.as_slice(), [Event::Busy(_)]),
        "{refused:?}"
    );
    release.release();
    assert_eq!(completed(&rest(&mut first).await).text, "main answer");
}

#[tokio::test]
async fn twenty_parallel_chats_on_five_sessions_are_all_answered_in_their_sessions() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), "");
    with_cap(&cfg, 5);
    let mut h = Harness::start(cfg).await;
    let mut sessions = Vec::new();
    for _ in 0..5 {
        sessions.push(new_session(&mut h).await);
    }
    for i in 0..20 {
        fake.push(Script::text(format!("answer {i}")));
    }
    let mut calls = Vec::new();
    for i in 0..20 {
        let session = sessions[i % 5];
        let mut client = h.client().await;
        calls.push(async move {
            let question = format!("question {i} for session {session}");
            // A call meeting its session's running turn is refused as busy: it asks again.
            tests::wait::eventually("an answer", Duration::from_secs(60), async || {
                let events = rest(&mut send_in(&mut client, Some(session), &question).await).await;
                match events.last() {
                    Some(Event::Completed(c)) => Some(c.text.clone()),
                    Some(Event::Busy(_)) => None,
                    other => panic!("{question}: unexpected end {other:?}"),
                }
            })
            .await
        });
    }
    for answer in futures::future::join_all(calls).await {
        assert!(answer.starts_with("answer "), "{answer}");
    }
    assert_eq!(fake.requests().len(), 20);
    // Every session holds its own four questions, each followed by its answer, nothing else.
    for &session in &sessions {
        let stored = tests::chat::stored(&h.cfg, session).await;
        let texts: Vec<String> = stored.iter().map(|m| m.text()).collect();
        let questions: Vec<&String> = texts.iter().filter(|t| t.contains("question ")).collect();
        assert_eq!(questions.len(), 4, "{texts:?}");
        assert!(
            questions
                .iter()
                .all(|q| q.ends_with(&format!("for session {session}"))),
            "{texts:?}"
        );
        assert_eq!(
            texts.iter().filter(|t| t.starts_with("answer ")).count(),
            4,
            "{texts:?}"
        );
    }
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.last_error.is_none(), "{:?}", status.last_error);
}

#[tokio::test]
async fn a_topic_gets_its_own_session_once_and_keeps_it_across_a_restart() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let topic = async |client: &mut AgentClient<Channel>, thread_id: i64| {
        client
            .topic_session(pb::TopicSessionRequest {
                thread_id,
                name: None,
            })
            .await
            .map(|r| r.into_inner())
    };
    let first = topic(&mut h.client, 41).await.unwrap();
    let session = first.session.clone().unwrap();
    assert!(first.created && !session.current, "{first:?}");
    let again = topic(&mut h.client, 41).await.unwrap();
    assert_eq!(
        (again.session.unwrap().id, again.created),
        (session.id, false)
    );
    let other = topic(&mut h.client, 42).await.unwrap().session.unwrap();
    assert_ne!(other.id, session.id);
    let bad = topic(&mut h.client, 0).await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);

    fake.push(Script::text("in the topic"));
    let events = rest(&mut send_in(&mut h.client, Some(session.id), "hi topic").await).await;
    assert_eq!(completed(&events).text, "in the topic");

    let mut h = h.restart().await;
    let kept = topic(&mut h.client, 41).await.unwrap();
    assert_eq!(
        (kept.session.unwrap().id, kept.created),
        (session.id, false)
    );
}
