//! The doom-loop guard asks the owner (issue 49), through both real binaries and the fake Bot
//! API: the model's third identical call brings a question with Stop / Let it continue / Tell
//! it something buttons; Stop ends the turn (the call never runs, the owner reads why); with four
//! identical calls, Let it continue runs the third and the fourth (asked once) and the model
//! hears what the owner chose; no tap within `general.ask_timeout_secs` (1 s here, through the
//! config) stops the turn and the model is told; Tell it something makes the owner's next
//! message a steer the model reads in place of the call.

use serde_json::Value;
use tests::fake_llm::Script;
use tests::fake_telegram::{OWNER_ID, SentMessage};
use tests::stack::{PROMPT, Stack};
use tests::wait::eventually;

/// The same `memory_search` call, as the model repeats it.
const SAME: &str = r#"{"query": "the same thing"}"#;

async fn message_with(stack: &Stack, needle: &str) -> SentMessage {
    eventually(&format!("a message with {needle:?}"), PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| m.text.contains(needle))
    })
    .await
}

/// The model calls `memory_search` with the same input `n` times.
fn identical_calls(stack: &Stack, n: usize) {
    for _ in 0..n {
        stack.llm.push(Script::tool_call("memory_search", SAME));
    }
}

/// The blocks (a `tool_result`'s content, a text's text) of the fake LLM's request `n`'s last
/// message.
fn last_blocks(stack: &Stack, n: usize) -> Vec<String> {
    let request = stack.llm.requests()[n].clone();
    let messages = request.body["messages"].as_array().unwrap().clone();
    messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            Value::Null => b["text"].as_str().unwrap_or_default().to_owned(),
            other => other.to_string(),
        })
        .collect()
}

/// The doom-loop question and its buttons (labels, data).
async fn the_question(stack: &Stack) -> (SentMessage, Vec<(String, String)>) {
    let asked = message_with(stack, "可能陷入了循环").await;
    assert!(asked.text.contains("memory_search"), "{}", asked.text);
    let buttons = stack.telegram.buttons(OWNER_ID, asked.message_id);
    let labels: Vec<&str> = buttons.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(labels, ["停止", "让它继续", "告诉它…"]);
    (asked, buttons)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_third_identical_call_asks_the_owner_and_stop_ends_the_turn() {
    let stack = Stack::start().await;
    // The model would go on; the third call stops it (the fake has no fourth answer).
    identical_calls(&stack, 3);
    stack.owner_says("find it");
    let (asked, buttons) = the_question(&stack).await;
    // Asked at the third call: two ran, nothing more reached the model meanwhile.
    assert_eq!(stack.llm.requests().len(), 3);
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, asked.message_id, &buttons[0].1);
    let stopped = message_with(&stack, "已停止").await;
    assert!(stopped.text.contains("memory_search"), "{}", stopped.text);
    assert_eq!(
        stack.llm.requests().len(),
        3,
        "the turn ended without asking the model again"
    );
    eventually("the buttons to go", PROMPT, async || {
        stack
            .telegram
            .buttons(OWNER_ID, asked.message_id)
            .is_empty()
    })
    .await;
    // The next turn's model sees the stop in the history.
    stack.llm.push(Script::text("ok"));
    stack.owner_says("and now?");
    message_with(&stack, "ok").await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("the owner chose to stop"), "{body}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_identical_calls_ask_once_and_let_it_continue_runs_them() {
    let stack = Stack::start().await;
    identical_calls(&stack, 4);
    stack.llm.push(Script::text("Found nothing, carried on"));
    stack.owner_says("find it");
    let (asked, buttons) = the_question(&stack).await;
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, asked.message_id, &buttons[1].1);
    message_with(&stack, "Found nothing, carried on").await;
    // The third call ran, with the owner's choice told after its result; so did the fourth.
    let third = last_blocks(&stack, 3);
    assert_eq!(third.len(), 2, "{third:?}");
    assert!(!third[0].contains("not run"), "the call ran: {third:?}");
    assert!(
        third[1].contains("the owner chose to let it run again"),
        "{third:?}"
    );
    let fourth = last_blocks(&stack, 4);
    assert!(
        fourth.len() == 1 && !fourth[0].contains("not run"),
        "{fourth:?}"
    );
    let asked_count = stack
        .telegram
        .messages(OWNER_ID)
        .iter()
        .filter(|m| m.text.contains("可能陷入了循环"))
        .count();
    assert_eq!(asked_count, 1, "asked once");
    stack.assert_no_secrets();
}

/// A stack whose questions wait `general.ask_timeout_secs` (shortened through the config).
async fn asking_for(secs: u64) -> Stack {
    Stack::start_edited("claude", "", |toml| {
        toml.replacen(
            "[general]\n",
            &format!("[general]\nask_timeout_secs = {secs}\n"),
            1,
        )
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tap_within_the_ask_timeout_stops_the_turn_and_the_model_is_told() {
    let stack = asking_for(1).await;
    identical_calls(&stack, 3);
    stack.owner_says("find it");
    // Nobody taps: the question times out (1 s, from the config) and the turn stops.
    let stopped = message_with(&stack, "而问你的问题没有得到回答").await;
    assert!(
        stopped.text.contains("已停止") && stopped.text.contains("memory_search"),
        "{}",
        stopped.text
    );
    assert!(
        stack
            .telegram
            .messages(OWNER_ID)
            .iter()
            .any(|m| m.text.contains("可能陷入了循环")),
        "the owner was asked first"
    );
    assert_eq!(
        stack.llm.requests().len(),
        3,
        "the call did not run and the model was not asked again"
    );
    // The next turn's model reads why the call did not run.
    stack.llm.push(Script::text("ok"));
    stack.owner_says("and now?");
    message_with(&stack, "ok").await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(
        body.contains("the owner did not answer in time, so the turn stops"),
        "{body}"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tell_it_something_makes_the_next_message_a_steer_the_model_sees() {
    let stack = Stack::start().await;
    identical_calls(&stack, 3);
    stack.llm.push(Script::text("Searching the notes instead"));
    stack.owner_says("find it");
    let (asked, buttons) = the_question(&stack).await;
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, asked.message_id, &buttons[2].1);
    message_with(&stack, "请发一条消息告诉它该怎么做").await;
    assert_eq!(stack.llm.requests().len(), 3, "the model waits");
    stack.owner_says("look in the notes, not the memories");
    message_with(&stack, "Searching the notes instead").await;
    // The third call did not run; the owner's words follow its result as a steer.
    let blocks = last_blocks(&stack, 3);
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert!(
        blocks[0].contains("not run") && blocks[0].contains("wrote to you instead"),
        "{blocks:?}"
    );
    assert_eq!(blocks[1], "[主人插话] look in the notes, not the memories");
    stack.assert_no_secrets();
}
