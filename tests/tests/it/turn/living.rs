//! Messages that live over gRPC (in-process agentd, issue 47): `Retry` runs the last owner
//! message again and the new try replaces the old one in the history; `EditMessage` restarts a
//! running turn before any tool ran (the first stream closed, only the edited answer), steers
//! one after a tool ran, says an ended turn is answered (and with `run` answers the edit), and
//! refuses an empty edit or a message Kernel never took.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use pb::edit_message_response::Outcome;
use tests::chat::{completed, rest, session_id, stored, turn, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Reply, Script};
use tests::harness::Harness;
use tests::wait::eventually;

const WAIT: Duration = Duration::from_secs(20);

fn keyed(text: &str, key: &str) -> pb::ChatRequest {
    pb::ChatRequest {
        text: text.into(),
        idempotency_keys: vec![key.into()],
        ..Default::default()
    }
}

fn edit(key: &str, text: &str, run: bool) -> pb::EditMessageRequest {
    pb::EditMessageRequest {
        message_key: key.into(),
        text: text.into(),
        run,
        ..Default::default()
    }
}

#[tokio::test]
async fn retry_replaces_the_last_answer_and_the_next_request_carries_only_the_newest_try() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    fake.push(Script::text("FIRST-TRY"));
    let events = turn(&mut h.client, "roll a die").await;
    assert_eq!(completed(&events).text, "FIRST-TRY");
    let session = session_id(&events);

    fake.push(Script::text("SECOND-TRY"));
    let retried = h
        .client
        .retry(pb::RetryRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(!retried.busy);
    assert!(!retried.turn_id.is_empty());
    assert_eq!(retried.model, "fake/fake-model");
    let cfg_dir = &h.cfg;
    eventually("the retried answer stored", WAIT, async || {
        let texts: Vec<String> = stored(cfg_dir, session)
            .await
            .iter()
            .map(|m| m.text())
            .collect();
        texts.contains(&"SECOND-TRY".to_owned())
    })
    .await;
    // The retried turn stores its answer before it gives its lane back.
    let client = h.client.clone();
    eventually("the retried turn finished", WAIT, async || {
        let status = client
            .clone()
            .get_status(pb::GetStatusRequest::default())
            .await
            .unwrap()
            .into_inner();
        status.running_turns.is_empty()
    })
    .await;
    let second = fake.last_request().unwrap().raw_body;
    assert!(second.contains("roll a die"), "the same message runs again");
    assert!(
        !second.contains("FIRST-TRY"),
        "the old answer is not in the retry's request"
    );

    fake.push(Script::text("NEXT"));
    let events = turn(&mut h.client, "and again").await;
    assert_eq!(completed(&events).text, "NEXT");
    let body = fake.last_request().unwrap().raw_body;
    assert!(
        body.contains("SECOND-TRY"),
        "the newest try is in the history"
    );
    assert!(
        !body.contains("FIRST-TRY"),
        "the replaced try is gone from the history"
    );
    assert_eq!(body.matches("roll a die").count(), 1, "the message once");
    assert_eq!(fake.requests().len(), 3, "three model calls");

    // Another model by name: an unknown one is refused and changes nothing.
    let refused = h
        .client
        .retry(pb::RetryRequest {
            model: Some("nowhere/none".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    // A session that does not exist is not found.
    let refused = h
        .client
        .retry(pb::RetryRequest {
            session_id: Some(session + 100),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::NotFound);
    // Another session's message cannot run again (without `resume`).
    h.client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    let refused = h
        .client
        .retry(pb::RetryRequest {
            session_id: Some(session),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    h.stop().await;
}

#[tokio::test]
async fn retry_in_an_empty_session_is_refused() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let refused = h
        .client
        .retry(pb::RetryRequest::default())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(fake.requests().is_empty());
    h.stop().await;
}

#[tokio::test]
async fn an_edit_before_any_tool_restarts_the_turn_with_the_edited_text() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    // A 3 s model: 30 characters, 3 every 300 ms.
    fake.push(Reply::text("OLD-ANSWER-".repeat(3)).slow(3, Duration::from_millis(300)));
    fake.push(Script::text("EDITED-ANSWER"));
    let mut stream = h
        .client
        .chat(keyed("what is 2+3", "tg:1:10"))
        .await
        .unwrap()
        .into_inner();
    until(&mut stream, |e| matches!(e, Event::TextDelta(_))).await;
    let edited = h
        .client
        .edit_message(edit("tg:1:10", "what is 2+2", false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(edited.outcome(), Outcome::Restarted);
    let events = rest(&mut stream).await;
    assert_eq!(
        completed(&events).text,
        "EDITED-ANSWER",
        "only the edited answer arrives"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Cancelled(_))),
        "the restart is no cancellation"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].raw_body.contains("what is 2+2"));
    assert!(
        !requests[1].raw_body.contains("what is 2+3"),
        "the old text is gone"
    );
    assert!(
        !requests[1].raw_body.contains("OLD-ANSWER"),
        "the partial answer is gone"
    );
    assert!(
        fake.served()[0].finished.is_none(),
        "the first stream was closed"
    );
    let session = session_id(&events);
    let texts: Vec<String> = stored(&h.cfg, session)
        .await
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(texts, ["what is 2+2", "EDITED-ANSWER"]);

    // After the answer: nothing runs without `run`; with it the edited text is answered.
    let after = h
        .client
        .edit_message(edit("tg:1:10", "what is 2+2, really", false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(after.outcome(), Outcome::Answered);
    assert_eq!(fake.requests().len(), 2, "no model call without the press");
    fake.push(Script::text("REALLY-FOUR"));
    let pressed = h
        .client
        .edit_message(edit("tg:1:10", "what is 2+2, really", true))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(pressed.outcome(), Outcome::Started);
    fake.wait_requests(3, WAIT).await;
    assert!(fake.requests()[2].raw_body.contains("what is 2+2, really"));
    h.stop().await;
}

#[tokio::test]
async fn an_edit_after_a_tool_ran_reaches_the_model_as_a_steer_before_its_next_step() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let (script, release) = Script::hold("HELD");
    fake.push(Script::tool_call("memory_list", "{}"));
    fake.push(script);
    fake.push(Script::text("STEERED-ANSWER"));
    let mut stream = h
        .client
        .chat(keyed("list my memories", "tg:1:20"))
        .await
        .unwrap()
        .into_inner();
    until(&mut stream, |e| matches!(e, Event::ToolFinished(_))).await;
    fake.wait_requests(2, WAIT).await;
    let edited = h
        .client
        .edit_message(edit("tg:1:20", "list my notes instead", false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(edited.outcome(), Outcome::Steered);
    release.release();
    let events = rest(&mut stream).await;
    assert_eq!(completed(&events).text, "STEERED-ANSWER");
    let last = fake.requests()[2].raw_body.clone();
    assert!(
        last.contains("the owner edited their message to: list my notes instead")
            || last.contains("主人把消息改成了：list my notes instead"),
        "{last}"
    );
    h.stop().await;
}

#[tokio::test]
async fn bad_edits_are_refused_and_run_nothing() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    fake.push(Script::text("OK"));
    let mut stream = h
        .client
        .chat(keyed("hello", "tg:1:30"))
        .await
        .unwrap()
        .into_inner();
    rest(&mut stream).await;
    let empty = h
        .client
        .edit_message(edit("tg:1:30", "   ", false))
        .await
        .unwrap_err();
    assert_eq!(empty.code(), tonic::Code::InvalidArgument);
    // An empty text with `run` is an offer's button: without a recorded offer, nothing to run.
    let no_offer = h
        .client
        .edit_message(edit("tg:1:30", "   ", true))
        .await
        .unwrap_err();
    assert_eq!(no_offer.code(), tonic::Code::NotFound);
    let unknown = h
        .client
        .edit_message(edit("tg:1:999", "x", true))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    let forged = h
        .client
        .edit_message(edit("has space", "x", true))
        .await
        .unwrap_err();
    assert_eq!(forged.code(), tonic::Code::InvalidArgument);
    assert_eq!(fake.requests().len(), 1, "nothing ran again");
    h.stop().await;
}
