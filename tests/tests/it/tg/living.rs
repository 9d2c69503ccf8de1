//! Messages that live through both real binaries and the fake Bot API (issue 47): an edit while
//! a 3 s turn streams restarts it (only the edited answer arrives, the first model stream
//! closed); an edit after the answer gets one offer (a second edit updates it) and runs
//! nothing until pressed; `/retry` and a 👎 on the last answer each give a new answer that
//! replaces the old one in the next request; a 👍 on the owner's own message changes nothing,
//! one on Kernel's answer is stored as feedback (the session's history shows it); an edit after
//! a tool ran reaches the model as a steer before its next step; the 👀 acknowledgement is set
//! when a message is taken (also while agentd is down) and cleared once it is answered; an
//! edit of a message kernel-tg holds while agentd is down, or of one in the backlog kept while
//! kernel-tg was down, replaces it: the turn runs once, with the edited text.

use std::time::Duration;

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::{Reply, Script};
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, outbox_drained, reply_target, rpc, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The message id a successful `sendMessage` call created.
fn sent_id(call: &tests::fake_telegram::Call) -> i64 {
    call.sent_message_id().expect("a sent message")
}

async fn reaction_is(stack: &Stack, message: i64, want: &[&str]) {
    eventually(
        &format!("the bot's reaction on {message} to be {want:?}"),
        PROMPT,
        async || stack.telegram.bot_reactions(OWNER_ID, message) == want,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_while_a_3s_turn_streams_restarts_it_and_only_the_edited_answer_arrives() {
    let stack = Stack::start().await;
    // A 3 s model: 30 characters, 3 every 300 ms.
    stack
        .llm
        .push(Reply::text("OLD-ANSWER".repeat(3)).slow(3, Duration::from_millis(300)));
    stack.llm.push(Script::text("EDITED-ANSWER"));
    let asked = stack.owner_says("what is 2+3");
    reaction_is(&stack, asked, &["👀"]).await;
    stack.llm.wait_requests(1, PROMPT).await;
    stack.telegram.edited_text(OWNER_ID, asked, "what is 2+2");
    let answer = stack.answer_sent("EDITED-ANSWER").await;
    assert_eq!(reply_target(&answer), Some(asked));
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2, "the edited text once more, nothing else");
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
        stack.llm.served()[0].finished.is_none(),
        "the first stream was closed"
    );
    reaction_is(&stack, asked, &[]).await;
    let visible = stack.visible();
    assert!(
        visible.iter().all(|m| !m.text.contains("OLD-ANSWER")),
        "the partial answer never delivered: {visible:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_after_the_answer_offers_one_button_and_only_the_press_runs_it() {
    let stack = Stack::start().await;
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
    assert_eq!(buttons[0].0, zh().edit_offer_button());
    // agentd keeps the offer (so it outlives a kernel-tg restart) once kernel-tg recorded it.
    eventually(
        "kernel-tg to record the offer with agentd",
        PROMPT,
        async || stack.logs().contains("the edit offer is recorded"),
    )
    .await;

    // A second edit updates the same offer.
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "book a table for 5");
    stack
        .telegram
        .wait_for_call(
            "editMessageText",
            |c| c.ok && text_of(c).contains("book a table for 5"),
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
    assert_eq!(offers, 1, "one offer");
    assert_eq!(
        stack.llm.requests().len(),
        1,
        "nothing ran without the press"
    );

    stack.llm.push(Script::text("TABLE-FOR-FIVE"));
    let data = buttons[0].1.clone();
    stack.telegram.press(OWNER_ID, OWNER_ID, offer_id, &data);
    stack.answer_sent("TABLE-FOR-FIVE").await;
    // Background model work (a title) may be among the later requests: look at each.
    let asked_with: Vec<String> = (1..stack.llm.requests().len())
        .map(|n| stack.user_message_of(n))
        .collect();
    assert!(
        asked_with.iter().any(|m| m.contains("book a table for 5")),
        "{asked_with:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_and_a_thumbs_down_each_answer_again_and_the_next_request_has_only_the_newest() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("JOKE-ONE"));
    let asked = stack.owner_says("tell me a joke");
    stack.answer_sent("JOKE-ONE").await;

    stack.llm.push(Script::text("JOKE-TWO"));
    let retry = stack.owner_says("/retry");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(retry) && text_of(c).contains("重新回答上一条消息"),
            PROMPT,
        )
        .await;
    let two = stack.answer_sent("JOKE-TWO").await;
    assert!(stack.user_message_of(1).contains("tell me a joke"));

    // A 👍 on the owner's own message changes nothing.
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, asked, &[], &["👍"]);
    stack.updates_confirmed().await;
    assert_eq!(stack.llm.requests().len(), 2);

    // A 👎 on the last answer offers to try again; the press does.
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&two), &[], &["👎"]);
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
    stack.llm.push(Script::text("JOKE-THREE"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    stack.answer_sent("JOKE-THREE").await;

    stack.llm.push(Script::text("NEXT-ANSWER"));
    stack.owner_says("another one");
    stack.answer_sent("NEXT-ANSWER").await;
    let body = stack.llm.requests()[3].raw_body.clone();
    assert!(
        body.contains("JOKE-THREE"),
        "the newest try is in the history"
    );
    assert!(
        !body.contains("JOKE-ONE") && !body.contains("JOKE-TWO"),
        "older tries are gone"
    );
    assert_eq!(body.matches("tell me a joke").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_acknowledgement_shows_a_message_waits_while_agentd_is_down() {
    let mut stack = Stack::start().await;
    stack.kill_agentd();
    let asked = stack.owner_says("are you there?");
    reaction_is(&stack, asked, &["👀"]).await;
    stack.llm.push(Script::text("HERE"));
    stack.start_agentd();
    stack.answer_sent("HERE").await;
    reaction_is(&stack, asked, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_after_a_tool_ran_reaches_the_model_as_a_steer_before_its_next_step() {
    let stack = Stack::start().await;
    let (held, release) = Script::hold("HELD");
    stack.llm.push(Script::tool_call("memory_list", "{}"));
    stack.llm.push(held);
    stack.llm.push(Script::text("STEERED-ANSWER"));
    let asked = stack.owner_says("list my memories");
    // The second call comes after the tool ran.
    stack.llm.wait_requests(2, PROMPT).await;
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "list my notes instead");
    // The edit reached the turn (its update confirmed) before the held step goes on.
    stack.updates_confirmed().await;
    release.release();
    stack.answer_sent("STEERED-ANSWER").await;
    let requests = stack.llm.requests();
    let steered = requests
        .iter()
        .skip(2)
        .find(|r| r.raw_body.contains("list my notes instead"))
        .map(|r| r.raw_body.clone())
        .expect("a later request carries the edit");
    assert!(
        steered.contains("主人把消息改成了：list my notes instead"),
        "the edit is a steer: {steered}"
    );
    let offers = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok && text_of(c).contains(zh().edit_offer_button()))
        .count();
    assert_eq!(offers, 0, "no edit offer for a running turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reaction_on_an_answer_is_stored_as_feedback_and_the_history_shows_it() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("FEEDBACK-ANSWER"));
    let asked = stack.owner_says("rate me");
    let answer = stack.answer_sent("FEEDBACK-ANSWER").await;
    // The owner reacts once the answer's delivery is acknowledged (it names the chat message
    // the reaction is matched by); under load the sendMessage can be seen before the ack.
    outbox_drained(&stack).await;
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&answer), &[], &["👍"]);
    let sessions = rpc(&stack, "ListSessions", json!({}));
    let session = sessions["sessions"][0]["id"]
        .as_str()
        .unwrap_or("0")
        .to_owned();
    let feedback_of = |role: &str| {
        let history = rpc(
            &stack,
            "GetSessionHistory",
            json!({ "session_id": session }),
        );
        history["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .map(|m| m["feedback"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    eventually("the 👍 stored on the answer", PROMPT, async || {
        feedback_of("assistant") == ["👍"]
    })
    .await;
    // A reaction on the owner's own message is no feedback and runs nothing.
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, asked, &[], &["👍"]);
    stack.updates_confirmed().await;
    assert_eq!(feedback_of("user"), [""]);
    assert_eq!(feedback_of("assistant"), ["👍"]);
    assert!(
        stack
            .telegram
            .calls_of("sendMessage")
            .iter()
            .all(|c| reply_target(c) != Some(sent_id(&answer))),
        "a reaction gets no reply"
    );
}

/// The owner texts the model was asked with (background work such as a title aside).
fn asked_with(stack: &Stack, needle: &str) -> Vec<String> {
    (0..stack.llm.requests().len())
        .map(|n| stack.user_message_of(n))
        .filter(|m| m.contains(needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_a_message_held_while_agentd_is_down_replaces_it() {
    let mut stack = Stack::start().await;
    stack.kill_agentd();
    let asked = stack.owner_says("book a table for 2");
    reaction_is(&stack, asked, &["👀"]).await;
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "book a table for 4");
    // kernel-tg took the edit (its update cannot be confirmed before the held message's).
    eventually("kernel-tg to take the edit", PROMPT, async || {
        stack.logs().contains("a waiting message was edited")
    })
    .await;
    stack.llm.push(Script::text("TABLE-FOR-FOUR"));
    stack.start_agentd();
    let answer = stack.answer_sent("TABLE-FOR-FOUR").await;
    assert_eq!(reply_target(&answer), Some(asked));
    let asked_with = asked_with(&stack, "book a table");
    assert_eq!(asked_with.len(), 1, "one turn: {asked_with:?}");
    assert!(
        asked_with[0].contains("book a table for 4"),
        "{asked_with:?}"
    );
    assert!(!asked_with[0].contains("for 2"), "{asked_with:?}");
    stack.updates_confirmed().await;
    let offers = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok && text_of(c).contains(zh().edit_offer_button()))
        .count();
    assert_eq!(
        offers, 0,
        "no edit offer: the edit was taken before the turn ran"
    );
    reaction_is(&stack, asked, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_in_the_backlog_replaces_the_message_it_edits() {
    let mut stack = Stack::start().await;
    stack.kill_bot();
    let asked = stack.owner_says("remind me at 7");
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "remind me at 8");
    stack.llm.push(Script::text("AT-EIGHT"));
    stack.start_bot().await;
    stack.answer_sent("AT-EIGHT").await;
    let asked_with = asked_with(&stack, "remind me");
    assert_eq!(asked_with.len(), 1, "one turn: {asked_with:?}");
    assert!(asked_with[0].contains("remind me at 8"), "{asked_with:?}");
    assert!(!asked_with[0].contains("at 7"), "{asked_with:?}");
}
