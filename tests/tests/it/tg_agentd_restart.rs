//! kernel-agentd going away under a running kernel-tg: the owner is told, a cut-off turn is
//! reported, and everything works again once agentd is back — without restarting kernel-tg.

use kernel_common::config::Locale;
use kernel_tg::texts::Texts;
use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, text_of};

fn zh() -> Texts {
    Texts::new(Locale::Zh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_is_told_while_agentd_is_down_and_it_works_again_after() {
    let mut stack = Stack::start().await;
    stack.kill_agentd();

    let asked = stack.owner_says("hello?");
    let reply = stack.reply_to(asked).await;
    assert_eq!(text_of(&reply), zh().agentd_unavailable());
    assert_eq!(stack.command("/status").await, zh().agentd_unavailable());
    assert!(stack.llm.requests().is_empty());

    stack.start_agentd();
    stack.llm.push(Script::text("I am back"));
    stack.owner_says("and now?");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "I am back", PROMPT)
        .await;
    let status = stack.command("/status").await;
    assert!(status.contains("fake-model"), "{status}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cut_off_by_an_agentd_crash_is_reported() {
    let mut stack = Stack::start().await;
    stack.llm.push(Script::stall());
    let asked = stack.owner_says("long job");
    let placeholder = stack.reply_to(asked).await.sent_message_id().unwrap();
    // Killed mid-stream: the model request is out and stalling.
    stack.llm.wait_requests(1, PROMPT).await;
    stack.kill_agentd();
    let told = stack
        .telegram
        .wait_for_call(
            "editMessageText",
            |c| {
                c.int_param("message_id") == Some(placeholder)
                    && text_of(c) == zh().turn_interrupted()
            },
            PROMPT,
        )
        .await;
    assert!(told.ok);

    stack.start_agentd();
    stack.llm.push(Script::text("fresh start"));
    stack.owner_says("retry");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "fresh start", PROMPT)
        .await;
    stack.assert_no_secrets();
}
