//! kernel-agentd going away under a running kernel-tg: a message waits for it (answered, marked
//! late, once agentd is back; named to the owner after `telegram.intake_wait_secs`), a cut-off
//! turn is reported, and everything works again — without restarting kernel-tg.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::stack::{LIVE_PREVIEW_OFF, PROMPT, Stack, reply_target, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_agentd_is_down_waits_and_is_answered_once_it_is_back() {
    let mut stack = Stack::start().await;
    stack.kill_agentd();

    let asked = stack.owner_says("hello?");
    assert_eq!(stack.command("/status").await, zh().agentd_unavailable());
    // The message is kept, not refused: Telegram still holds it (not confirmed).
    assert!(stack.telegram.pending_updates() >= 1);
    assert!(stack.llm.requests().is_empty());

    stack.llm.push(Script::text("I am back"));
    stack.start_agentd();
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "I am back", PROMPT)
        .await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("hello?"), "{body}");
    assert!(body.contains("[离线期间 "), "marked late: {body}");
    stack.updates_confirmed().await;
    let said: Vec<String> = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| reply_target(c) == Some(asked))
        .map(text_of)
        .collect();
    assert!(
        !said.iter().any(|t| t == zh().agentd_unavailable()),
        "{said:?}"
    );
    stack.llm.push(Script::text("still here"));
    stack.owner_says("and now?");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "still here", PROMPT)
        .await;
    let status = stack.command("/status").await;
    assert!(status.contains("fake-model"), "{status}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_agentd_does_not_take_in_time_is_named_to_the_owner_in_their_language() {
    let mut stack = Stack::start_edited("claude", "", |toml| {
        toml.replace(
            LIVE_PREVIEW_OFF,
            &format!("{LIVE_PREVIEW_OFF}\nintake_wait_secs = 2"),
        )
    })
    .await;
    stack.kill_agentd();
    let asked = stack.owner_says("words that wait");
    let told = stack.reply_to(asked).await;
    assert_eq!(text_of(&told), zh().not_taken("words that wait", 2));
    // Handled: confirmed, and not run later when agentd is back.
    stack.updates_confirmed().await;
    stack.start_agentd();
    let status = stack.command("/status").await;
    assert!(status.contains("fake-model"), "{status}");
    assert!(stack.llm.requests().is_empty());
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
