//! Concurrency through the real binaries: `/status` and `/cancel` answer while a turn runs, the
//! busy notice comes once per busy window, and `/cancel` ends a stalled turn at once.

use std::time::{Duration, Instant};

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::eventually;

const CANCEL_DEADLINE: Duration = Duration::from_secs(1);

fn zh() -> Told {
    Told::new(Locale::Zh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_cancel_answer_while_busy_and_the_busy_notice_comes_once() {
    let stack = Stack::start().await;
    stack.llm.push(Script::stall());
    let first = stack.owner_says("take your time");
    let placeholder = stack.reply_to(first).await;
    assert_eq!(text_of(&placeholder), zh().placeholder());
    let placeholder_id = placeholder.sent_message_id().unwrap();

    let status = stack.command("/status").await;
    assert!(status.contains("fake-model"), "{status}");

    let second = stack.owner_says("are you there?");
    let busy = stack.reply_to(second).await;
    assert_eq!(text_of(&busy), zh().busy());
    let third = stack.owner_says("hello??");
    // kernel-tg confirms an update (next offset) only after handing it to the turn intake; once
    // confirmed, the third reaches agentd (busy) well before a /cancel sent now could: the
    // /cancel needs another long poll. Sent together, the /cancel could win and the third would
    // then start a turn of its own.
    eventually("kernel-tg to take the third message", PROMPT, async || {
        stack.telegram.pending_updates() == 0
    })
    .await;
    // Cancel mid-stream: the model request is out and stalling (else the stall would be left
    // queued for the next turn).
    stack.llm.wait_requests(1, PROMPT).await;

    let asked = Instant::now();
    let cancelled = stack.command("/cancel").await;
    let took = asked.elapsed();
    assert_eq!(cancelled, zh().cancelled());
    assert!(took < CANCEL_DEADLINE, "/cancel took {took:?}");
    // The turn ended: its placeholder is gone and nothing else was said about it.
    stack
        .telegram
        .wait_for_call(
            "deleteMessage",
            |c| c.int_param("message_id") == Some(placeholder_id),
            PROMPT,
        )
        .await;

    // Turns reach agentd in order: once the next one is answered, the third was handled.
    stack.llm.push(Script::text("back again"));
    let fourth = stack.owner_says("now?");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c).contains("back again"), PROMPT)
        .await;
    let sends = stack.telegram.calls_of("sendMessage");
    assert!(
        sends.iter().all(|c| reply_target(c) != Some(third)),
        "{}",
        stack.telegram.call_log()
    );
    let busy_notices = sends.iter().filter(|c| text_of(c) == zh().busy()).count();
    assert_eq!(busy_notices, 1, "{}", stack.telegram.call_log());
    let answer = sends
        .iter()
        .find(|c| text_of(c).contains("back again"))
        .unwrap();
    assert_eq!(reply_target(answer), Some(fourth));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_nothing_running_says_so() {
    let stack = Stack::start().await;
    assert_eq!(stack.command("/cancel").await, zh().nothing_to_cancel());
    stack.assert_no_secrets();
}
