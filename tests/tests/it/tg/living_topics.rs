//! Messages that live inside a Telegram topic (issues 46 and 47), through both real binaries
//! and the fake Bot API: an edit after the answer offers in the topic and the press answers in
//! the topic's session; `/retry` in the topic runs the topic's last message again (not the main
//! chat's); a 👎 on the topic's answer offers in the topic and the press tries again there.
//! Each answer lands in the topic and each model request carries the topic's session only.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::{Call, OWNER_ID};
use tests::stack::{PROMPT, Stack, outbox_drained, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The ok `sendMessage` into topic `thread` whose text contains `needle`, once it came.
async fn sent_in(stack: &Stack, thread: i64, needle: &str) -> Call {
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| {
                c.ok && c.int_param("message_thread_id") == Some(thread)
                    && text_of(c).contains(needle)
            },
            PROMPT,
        )
        .await
}

fn sent_id(call: &Call) -> i64 {
    call.sent_message_id().expect("a sent message")
}

/// The newest model request: it carries `needle` and none of the main chat's messages.
fn only_the_topic_in(stack: &Stack, needle: &str) {
    let requests = stack.llm.requests();
    let body = requests
        .last()
        .map(|r| r.raw_body.clone())
        .unwrap_or_default();
    assert!(body.contains(needle), "{needle:?} in {body}");
    assert!(
        !body.contains("main chat question") && !body.contains("MAIN-ANSWER"),
        "the topic's session only: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_topic_edits_retry_and_a_thumbs_down_act_on_that_topic_and_answer_there() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let topic = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    // The main chat has a last message of its own.
    stack.llm.push(Script::text("MAIN-ANSWER"));
    stack.owner_says("main chat question");
    stack.answer_sent("MAIN-ANSWER").await;
    stack.llm.push(Script::text("TOPIC-ANSWER-ONE"));
    let asked = stack
        .telegram
        .user_text_in_topic(OWNER_ID, topic, "topic question one");
    sent_in(&stack, topic, "TOPIC-ANSWER-ONE").await;

    // An edit after the answer: the offer is in the topic; the press answers there.
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "topic question edited");
    let offer = sent_in(&stack, topic, "topic question edited").await;
    let buttons = stack.telegram.buttons(OWNER_ID, sent_id(&offer));
    assert_eq!(buttons[0].0, zh().edit_offer_button());
    stack.llm.push(Script::text("TOPIC-EDIT-ANSWER"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    sent_in(&stack, topic, "TOPIC-EDIT-ANSWER").await;
    only_the_topic_in(&stack, "topic question edited");

    // `/retry` in the topic: the topic's last message runs again, answered in the topic.
    stack.llm.push(Script::text("TOPIC-RETRY-ANSWER"));
    stack.telegram.user_text_in_topic(OWNER_ID, topic, "/retry");
    let retried = sent_in(&stack, topic, "TOPIC-RETRY-ANSWER").await;
    let last = stack.llm.requests().len() - 1;
    assert!(
        stack
            .user_message_of(last)
            .contains("topic question edited"),
        "{}",
        stack.user_message_of(last)
    );
    only_the_topic_in(&stack, "topic question edited");

    // A 👎 on the topic's last answer: the offer is in the topic; the press tries again there.
    outbox_drained(&stack).await;
    stack
        .telegram
        .user_reaction(OWNER_ID, OWNER_ID, sent_id(&retried), &[], &["👎"]);
    let offer = sent_in(&stack, topic, zh().try_again_offer()).await;
    let buttons = stack.telegram.buttons(OWNER_ID, sent_id(&offer));
    assert_eq!(buttons[0].0, zh().try_again_button());
    stack.llm.push(Script::text("TOPIC-AGAIN"));
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, sent_id(&offer), &buttons[0].1);
    sent_in(&stack, topic, "TOPIC-AGAIN").await;
    let last = stack.llm.requests().len() - 1;
    assert!(
        stack
            .user_message_of(last)
            .contains("topic question edited"),
        "{}",
        stack.user_message_of(last)
    );
    only_the_topic_in(&stack, "topic question edited");
    // The main chat's session was never touched: its last answer is still the one.
    assert!(
        stack
            .telegram
            .calls_of("sendMessage")
            .iter()
            .filter(|c| c.ok && text_of(c).contains("ANSWER"))
            .all(|c| text_of(c) == "MAIN-ANSWER"
                || c.int_param("message_thread_id") == Some(topic)),
        "every topic answer landed in the topic"
    );
}
