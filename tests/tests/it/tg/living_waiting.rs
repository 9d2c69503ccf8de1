//! Edits of messages that still wait, through both real binaries and the fake Bot API (issue
//! 47): a `/next <text>` message edited while its item waits in the queue replaces the item's
//! text (the queued turn runs once, with the new text; the edited message gets no offer); an
//! edit that makes it another command is refused with the reason; a message waiting in a burst
//! (a text at Telegram's split length waiting for its continuation) takes its edit there.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The owner texts the model was asked with that contain `needle`.
fn asked_with(stack: &Stack, needle: &str) -> Vec<String> {
    (0..stack.llm.requests().len())
        .map(|n| stack.user_message_of(n))
        .filter(|m| m.contains(needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_a_next_message_while_it_waits_replaces_the_queued_text() {
    let stack = Stack::start().await;
    let (held, release) = Script::hold("FIRST-DONE");
    stack.llm.push(held);
    stack.owner_says("a long task");
    stack.llm.wait_requests(1, PROMPT).await;

    let queued = stack.owner_says("/next book a table for 2");
    let reply = stack.reply_to(queued).await;
    assert_eq!(text_of(&reply), zh().queued_next(1));
    stack
        .telegram
        .edited_text(OWNER_ID, queued, "/next book a table for 4");
    stack.updates_confirmed().await;
    let status = stack.command("/status").await;
    assert!(status.contains("book a table for 4"), "{status}");
    assert!(!status.contains("book a table for 2"), "{status}");

    // An edit that makes it another command is refused with the reason; the item stays.
    let other = stack.owner_says("/next water the plants");
    stack.reply_to(other).await;
    stack.telegram.edited_text(OWNER_ID, other, "/cancel");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(other) && text_of(c) == zh().edit_command(),
            PROMPT,
        )
        .await;

    stack.llm.push(Script::text("TABLE-FOR-FOUR"));
    stack.llm.push(Script::text("PLANTS-WATERED"));
    release.release();
    let answer = stack.answer_sent("TABLE-FOR-FOUR").await;
    assert_eq!(reply_target(&answer), Some(queued));
    stack.answer_sent("PLANTS-WATERED").await;
    let asked = asked_with(&stack, "book a table");
    assert_eq!(asked.len(), 1, "one turn: {asked:?}");
    assert!(asked[0].contains("book a table for 4"), "{asked:?}");
    assert!(!asked[0].contains("for 2"), "{asked:?}");
    assert_eq!(asked_with(&stack, "water the plants").len(), 1);
    let offers = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok && text_of(c).contains(zh().edit_offer_button()))
        .count();
    assert_eq!(
        offers, 0,
        "no edit offer: the edit was taken while it waited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_a_message_waiting_in_a_burst_replaces_it() {
    let stack = Stack::start().await;
    // A text at Telegram's split length waits (2 s) for its continuation.
    let long = format!("{}END1", "a".repeat(4_092));
    let asked = stack.owner_says(&long);
    stack
        .telegram
        .edited_text(OWNER_ID, asked, "the short edited question");
    stack.llm.push(Script::text("EDITED-BURST-ANSWER"));
    let answer = stack.answer_sent("EDITED-BURST-ANSWER").await;
    assert_eq!(reply_target(&answer), Some(asked));
    assert!(
        stack.logs().contains("a waiting message was edited"),
        "the edit was taken while the message waited"
    );
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    assert!(requests[0].raw_body.contains("the short edited question"));
    assert!(
        !requests[0].raw_body.contains("END1"),
        "the old text is gone"
    );
}
