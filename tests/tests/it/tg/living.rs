//! Messages that live through both real binaries and the fake Bot API (issue 47): an edit while
//! a 3 s turn streams restarts it (only the edited answer arrives, the first model stream
//! closed); an edit after the answer gets one offer (a second edit updates it) and runs
//! nothing until pressed; `/retry` and a 👎 on the last answer each give a new answer that
//! replaces the old one in the next request; a 👍 on the owner's own message changes nothing;
//! the 👀 acknowledgement is set when a message is taken (also while agentd is down) and
//! cleared once it is answered.

use std::time::Duration;

use kernel_common::config::Locale;
use kernel_tg::texts::Texts;
use tests::fake_llm::{Reply, Script};
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::wait::eventually;

fn zh() -> Texts {
    Texts::new(Locale::Zh)
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
