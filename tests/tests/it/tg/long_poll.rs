//! kernel-tg's long poll around a quiet spell (issue 51): a message that arrives just after a
//! getUpdates timed out empty is taken at once and reaches the model within 100 ms (kernel-tg
//! used to pause a second after every empty answer); the pause stays for answers that held
//! only updates already taken (a turn waiting for agentd), so that case is not a busy loop.
//! Times come from the fakes' logs (when the fake Bot API answered, when the fake LLM
//! received), not from sleeping.

use std::time::{Duration, Instant};

use serde_json::Value;
use tests::fake_llm::Script;
use tests::fake_telegram::Call;
use tests::stack::{PROMPT, Stack, text_of};

/// Whether a getUpdates answer holds the owner's message `message_id`.
fn holds(call: &Call, message_id: i64) -> bool {
    call.result
        .as_ref()
        .and_then(Value::as_array)
        .is_some_and(|updates| {
            updates
                .iter()
                .any(|u| u["message"]["message_id"].as_i64() == Some(message_id))
        })
}

fn is_empty_answer(call: &Call) -> bool {
    call.ok
        && call
            .result
            .as_ref()
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_just_after_an_empty_long_poll_reaches_the_model_within_100_ms() {
    let stack = Stack::start().await;
    // One turn first: this test is about the poll, not about what a first turn warms up.
    stack.llm.push(Script::text("warm"));
    stack.owner_says("warm up");
    stack.answer_sent("warm").await;
    stack.updates_confirmed().await;

    stack.llm.push(Script::text("taken at once"));
    let since = stack.telegram.call_count();
    stack.telegram.time_out_poll();
    let empty = stack
        .telegram
        .wait_for_call_since(since, "getUpdates", is_empty_answer, PROMPT)
        .await;
    let asked = stack.owner_says("right after the quiet poll");
    let arrived = Instant::now();
    stack.answer_sent("taken at once").await;

    let taken = stack
        .telegram
        .wait_for_call_since(since, "getUpdates", |c| holds(c, asked), PROMPT)
        .await;
    let served = stack.llm.served();
    let model_called = served.last().expect("the model was called").received;
    let after_empty = arrived.duration_since(empty.at);
    let taken_in = taken.at.duration_since(arrived);
    let model_in = model_called.duration_since(arrived);
    eprintln!(
        "message queued {after_empty:?} after the empty answer; taken by getUpdates after \
         {taken_in:?}; the model called after {model_in:?}"
    );
    // The old pause was 1 s; both bounds catch it. 100 ms is the figure: generous for
    // the poll itself (~2 ms in a debug build), and for the whole way to the model it leaves
    // room for a debug build on a loaded machine (measured 34 ms there; the hand-over to agentd
    // and the request assembly are most of it).
    assert!(
        taken_in < Duration::from_millis(100),
        "taken {taken_in:?} after it arrived; calls:\n{}",
        stack.telegram.call_log()
    );
    assert!(
        model_in < Duration::from_millis(100),
        "the model was called {model_in:?} after the message arrived"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_of_updates_already_taken_still_pauses_the_poll() {
    let mut stack = Stack::start().await;
    stack.kill_agentd();
    let asked = stack.owner_says("waiting for agentd");
    // The first answer takes the message; the turn waits for agentd, so the update is not
    // confirmed and every later answer holds it again: those come a pause apart.
    let mut answers: Vec<Call> = Vec::new();
    let mut since = 0;
    while answers.len() < 4 {
        let call = stack
            .telegram
            .wait_for_call_since(since, "getUpdates", |c| holds(c, asked), PROMPT)
            .await;
        since = 1 + stack
            .telegram
            .calls()
            .iter()
            .position(|c| c.method == call.method && c.at == call.at)
            .expect("the call is logged");
        answers.push(call);
    }
    let gaps: Vec<Duration> = answers
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect();
    eprintln!("gaps between answers holding the taken update: {gaps:?}");
    // After the first re-delivery (the answer right after the message was taken), each
    // re-delivery waits the held pause (1 s); a little slack for timer granularity.
    for gap in &gaps[1..] {
        assert!(
            *gap >= Duration::from_millis(900),
            "re-polled after {gap:?}: {gaps:?}; calls:\n{}",
            stack.telegram.call_log()
        );
    }

    stack.llm.push(Script::text("back"));
    stack.start_agentd();
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "back", PROMPT)
        .await;
    stack.updates_confirmed().await;
}
