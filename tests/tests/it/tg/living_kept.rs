//! What messages that live keep across restarts and pruning, through both real binaries and
//! the fake Bot API (issue 47): an offer to answer an edited message outlives a kernel-tg
//! restart (a second edit after it updates the same offer, the press runs the newest text);
//! a reaction on an answer whose outbox row is pruned (a week after delivery), with kernel-tg
//! restarted, is still stored as feedback and a 👎 there still offers to try again; after an
//! agentd restart (before any new message) a 👎 "Try again" and `/retry` still run the last
//! message again, each new try replacing the old one in the next request; a 👎 on the last
//! answer of a session the owner left with `/new` still tries *that* answer again: the press
//! makes it the current session again and answers there.

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::Script;
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, outbox_drained, prune_outbox, reply_target, rpc, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The message id a successful `sendMessage` call created.
fn sent_id(call: &tests::fake_telegram::Call) -> i64 {
    call.sent_message_id().expect("a sent message")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_offer_survives_a_kernel_tg_restart() {
    let mut stack = Stack::start().await;
    stack.llm.push(Script::text("TABLE-FOR-TWO"));
    let asked = stack.owner_says("book a table for 2");
    stack.answer_sent("TABLE-FOR-TWO").await;

    stack
        .telegram
        .edited_text(OWNER_ID, asked, "book a table for 4");
    let offer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c).contains("book a table for 4"),
            PROMPT,
        )
        .await;
    let offer_id = sent_id(&offer);
    let buttons = stack.telegram.buttons(OWNER_ID, offer_id);
    assert_eq!(buttons.len(), 1, "{buttons:?}");
    eventually(
        "kernel-tg to record the offer with agentd",
        PROMPT,
        async || stack.logs().contains("the edit offer is recorded"),
    )
    .await;
    stack.updates_confirmed().await;

    // kernel-tg restarts: it remembers nothing; agentd kept the edit and its offer.
    stack.kill_bot();
    stack.start_bot().await;
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "book a table for 5");
    stack
        .telegram
        .wait_for_call(
            "editMessageText",
            |c| {
                c.ok && c.int_param("message_id") == Some(offer_id)
                    && text_of(c).contains("book a table for 5")
            },
            PROMPT,
        )
        .await;
    stack.updates_confirmed().await;
    let offers = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok && reply_target(c) == Some(asked) && text_of(c).contains("book a table"))
        .count();
    assert_eq!(offers, 1, "one offer, updated after the restart");
    assert_eq!(
        stack.llm.requests().len(),
        1,
        "nothing ran without the press"
    );

    stack.llm.push(Script::text("TABLE-FOR-FIVE"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, offer_id, &buttons[0].1);
    stack.answer_sent("TABLE-FOR-FIVE").await;
    let asked_with: Vec<String> = (1..stack.llm.requests().len())
        .map(|n| stack.user_message_of(n))
        .collect();
    assert!(
        asked_with.iter().any(|m| m.contains("book a table for 5")),
        "{asked_with:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reaction_finds_an_answer_whose_outbox_row_is_pruned() {
    let mut stack = Stack::start().await;
    stack.llm.push(Script::text("OLD-JOKE"));
    stack.owner_says("tell me a joke");
    let answer = stack.answer_sent("OLD-JOKE").await;
    outbox_drained(&stack).await;

    // A week later the delivered item's outbox row is pruned; kernel-tg restarted meanwhile.
    stack.kill_bot();
    assert!(prune_outbox(&stack).await >= 1);
    stack.start_bot().await;

    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&answer), &[], &["👎"]);
    let offer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == zh().try_again_offer(),
            PROMPT,
        )
        .await;
    assert_eq!(reply_target(&offer), Some(sent_id(&answer)));
    let sessions = rpc(&stack, "ListSessions", json!({}));
    let session = sessions["sessions"][0]["id"]
        .as_str()
        .unwrap_or("0")
        .to_owned();
    eventually("the 👎 stored on the old answer", PROMPT, async || {
        let history = rpc(
            &stack,
            "GetSessionHistory",
            json!({ "session_id": session }),
        );
        history["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["role"] == "assistant" && m["feedback"] == "👎")
    })
    .await;

    let buttons = stack.telegram.buttons(OWNER_ID, sent_id(&offer));
    stack.llm.push(Script::text("NEW-JOKE"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    stack.answer_sent("NEW-JOKE").await;
    assert!(stack.user_message_of(1).contains("tell me a joke"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_again_and_retry_work_after_an_agentd_restart() {
    let mut stack = Stack::start().await;
    stack.llm.push(Script::text("JOKE-ONE"));
    stack.owner_says("tell me a joke");
    let one = stack.answer_sent("JOKE-ONE").await;
    outbox_drained(&stack).await;

    // agentd restarts (same database): no session is current until one is used.
    stack.kill_agentd();
    stack.start_agentd();
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&one), &[], &["👎"]);
    let offer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == zh().try_again_offer(),
            PROMPT,
        )
        .await;
    let buttons = stack.telegram.buttons(OWNER_ID, sent_id(&offer));
    assert_eq!(buttons[0].0, zh().try_again_button());
    stack.llm.push(Script::text("JOKE-TWO"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    stack.answer_sent("JOKE-TWO").await;
    outbox_drained(&stack).await;

    // Again a restart, then `/retry`.
    stack.kill_agentd();
    stack.start_agentd();
    stack.llm.push(Script::text("JOKE-THREE"));
    let retry = stack.owner_says("/retry");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(retry) && text_of(c).contains("重新回答上一条消息"),
            PROMPT,
        )
        .await;
    stack.answer_sent("JOKE-THREE").await;
    let said: Vec<String> = ["sendMessage", "answerCallbackQuery"]
        .into_iter()
        .flat_map(|method| stack.telegram.calls_of(method))
        .map(|c| text_of(&c))
        .collect();
    assert!(
        !said.iter().any(|t| t == zh().nothing_to_retry()),
        "{said:?}"
    );

    // The next request carries only the newest try, and the owner's message once.
    stack.llm.push(Script::text("NEXT-ANSWER"));
    stack.owner_says("another one");
    stack.answer_sent("NEXT-ANSWER").await;
    let body = stack
        .llm
        .requests()
        .into_iter()
        .map(|r| r.raw_body)
        .find(|b| b.contains("another one"))
        .expect("the next message's request");
    assert!(body.contains("JOKE-THREE"), "the newest try: {body}");
    assert!(
        !body.contains("JOKE-ONE") && !body.contains("JOKE-TWO"),
        "older tries are gone: {body}"
    );
    assert_eq!(body.matches("tell me a joke").count(), 1, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_again_on_a_left_session_resumes_it_and_answers_there() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("JOKE-ONE"));
    stack.owner_says("tell me a joke");
    let joke = stack.answer_sent("JOKE-ONE").await;
    assert_eq!(stack.command("/new").await, zh().new_session());
    stack.llm.push(Script::text("WEATHER-ANSWER"));
    stack.owner_says("how is the weather");
    stack.answer_sent("WEATHER-ANSWER").await;
    outbox_drained(&stack).await;

    // The 👎 on the left session's last answer offers to try it again; the press runs it there.
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&joke), &[], &["👎"]);
    let offer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == zh().try_again_offer(),
            PROMPT,
        )
        .await;
    assert_eq!(reply_target(&offer), Some(sent_id(&joke)));
    let buttons = stack.telegram.buttons(OWNER_ID, sent_id(&offer));
    stack.llm.push(Script::text("JOKE-TWO"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    stack.answer_sent("JOKE-TWO").await;
    let retried = stack.llm.requests().len() - 1;
    let asked = stack.user_message_of(retried);
    assert!(asked.contains("tell me a joke"), "{asked}");
    let toasts: Vec<String> = stack
        .telegram
        .calls_of("answerCallbackQuery")
        .iter()
        .map(text_of)
        .collect();
    assert!(
        toasts.iter().all(|t| t != zh().nothing_to_retry()),
        "{toasts:?}"
    );
    outbox_drained(&stack).await;

    // That session is the current one again: the next message continues it, the newest try only.
    stack.llm.push(Script::text("NEXT-ANSWER"));
    stack.owner_says("another one");
    stack.answer_sent("NEXT-ANSWER").await;
    let body = stack
        .llm
        .requests()
        .into_iter()
        .map(|r| r.raw_body)
        .find(|b| b.contains("another one"))
        .expect("the next message's request");
    assert!(
        body.contains("JOKE-TWO") && body.contains("tell me a joke"),
        "{body}"
    );
    assert!(
        !body.contains("JOKE-ONE") && !body.contains("how is the weather"),
        "only the resumed session's newest try: {body}"
    );
}
