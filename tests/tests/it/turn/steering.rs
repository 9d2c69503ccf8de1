//! Steering over gRPC (in-process agentd): `ask_user`'s question is a `Chat` event and its
//! answer the `Answer` RPC (stale or unknown answers refused), a `Chat` while it is pending
//! answers it, `Steer` with no turn running starts one, `QueueNext` refuses empty text and
//! `GetStatus` lists the queue.

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, rest, send, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;

fn tool_result_text(fake: &FakeLlm, n: usize) -> String {
    let requests = fake.requests();
    let last = requests[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let result = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result")
        .unwrap()
        .clone();
    match &result["content"] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn the_question_is_an_event_and_the_answer_an_rpc() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    fake.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Tea or coffee?", "options": ["tea", "coffee"]}"#,
    ));
    fake.push(Script::text("Coffee it is"));
    let mut stream = send(&mut h.client, "make me a drink").await;
    let Event::Question(question) = until(&mut stream, |e| matches!(e, Event::Question(_))).await
    else {
        unreachable!()
    };
    assert_eq!(question.text, "Tea or coffee?");
    assert_eq!(question.options, ["tea", "coffee"]);

    let answer = |question_id: &str, option: Option<u32>| pb::AnswerRequest {
        question_id: question_id.to_owned(),
        option,
        text: String::new(),
    };
    let refused = h.client.answer(answer("q-unknown", Some(0))).await.unwrap();
    assert!(!refused.into_inner().accepted);
    let no_such_option = h
        .client
        .answer(answer(&question.question_id, Some(7)))
        .await;
    assert!(!no_such_option.unwrap().into_inner().accepted);
    let accepted = h
        .client
        .answer(answer(&question.question_id, Some(1)))
        .await;
    assert!(accepted.unwrap().into_inner().accepted);
    let stale = h
        .client
        .answer(answer(&question.question_id, Some(0)))
        .await;
    assert!(!stale.unwrap().into_inner().accepted);

    let events = rest(&mut stream).await;
    assert!(
        events.iter().any(
            |e| matches!(e, Event::QuestionClosed(c) if c.question_id == question.question_id)
        ),
        "{events:?}"
    );
    assert_eq!(completed(&events).text, "Coffee it is");
    assert_eq!(tool_result_text(&fake, 1), "coffee");
    h.stop().await;
}

#[tokio::test]
async fn a_chat_while_a_question_is_pending_answers_it() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    fake.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Your name?"}"#,
    ));
    fake.push(Script::text("Hello Ada"));
    let mut stream = send(&mut h.client, "greet me").await;
    until(&mut stream, |e| matches!(e, Event::Question(_))).await;
    let reply = rest(&mut send(&mut h.client, "Ada").await).await;
    assert!(
        matches!(reply.as_slice(), [Event::Answered(_)]),
        "{reply:?}"
    );
    let events = rest(&mut stream).await;
    assert_eq!(completed(&events).text, "Hello Ada");
    assert_eq!(tool_result_text(&fake, 1), "Ada");
    h.stop().await;
}

#[tokio::test]
async fn steer_without_a_turn_starts_one_and_the_queue_shows_in_status() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let (held, _release) = Script::hold("Started by a steer");
    fake.push(held);
    let steer = pb::SteerRequest {
        text: "hello".into(),
        deliver_to_owner: None,
        ..Default::default()
    };
    assert!(!h.client.steer(steer).await.unwrap().into_inner().steered);
    fake.wait_requests(1, tests::stack::PROMPT).await;

    let queue = |text: &str| pb::QueueNextRequest {
        text: text.into(),
        reply_to_message_id: None,
        session_id: None,
        message_key: Some("grpc:next:1".into()),
    };
    assert!(h.client.queue_next(queue("  ")).await.is_err());
    let queued = h.client.queue_next(queue("later")).await.unwrap();
    assert_eq!(queued.into_inner().position, 1);
    let status = h.client.get_status(pb::GetStatusRequest {}).await.unwrap();
    assert_eq!(status.into_inner().queued_next, ["later"]);
    // An edit of the queued message (by its key) replaces its text while it waits.
    let edit = pb::EditMessageRequest {
        message_key: "grpc:next:1".into(),
        text: "later, edited".into(),
        ..Default::default()
    };
    let edited = h.client.edit_message(edit).await.unwrap().into_inner();
    assert_eq!(
        edited.outcome(),
        pb::edit_message_response::Outcome::ReplacedWaiting
    );
    let status = h.client.get_status(pb::GetStatusRequest {}).await.unwrap();
    assert_eq!(status.into_inner().queued_next, ["later, edited"]);

    let cancel = pb::CancelRequest {
        clear_queue: true,
        turn_id: None,
        ..Default::default()
    };
    let reply = h.client.cancel(cancel).await.unwrap().into_inner();
    assert!(reply.cancelled);
    assert_eq!((reply.cleared, reply.queued), (1, 0));
    let status = h.client.get_status(pb::GetStatusRequest {}).await.unwrap();
    assert!(status.into_inner().queued_next.is_empty());
    h.stop().await;
}
