//! Stop with live drafts (`telegram.live_preview`): drafts carry no buttons, so a turn that runs
//! longer than a few seconds gets a small message with a Stop button that cancels it (and the
//! message goes when the turn ends); a quick turn adds no message.

use std::time::Duration;

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::OWNER_ID;
use tests::stack::{LIVE_PREVIEW_OFF, PROMPT, Stack, text_of};
use tests::told::Told;
use tests::wait::eventually;

/// kernel-tg's delay before the offer (`delivery::stop_offer::AFTER`).
const OFFER_DELAY: Duration = Duration::from_secs(3);

fn zh() -> Told {
    Told::new(Locale::Zh)
}

async fn drafting_stack() -> Stack {
    Stack::start_edited("claude", "", |toml| {
        toml.replace(LIVE_PREVIEW_OFF, "live_preview = true")
    })
    .await
}

fn offers_sent(stack: &Stack) -> usize {
    stack
        .telegram
        .calls()
        .iter()
        .filter(|c| c.method == "sendmessage" && c.ok && text_of(c).contains(zh().stop_offer()))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_drafted_turn_offers_stop_and_a_quick_one_adds_nothing() {
    let stack = drafting_stack().await;

    // Quick: the answer, and no Stop offer even after the offer's delay has passed.
    stack.llm.push(Script::text("Quick answer"));
    stack.owner_says("quick?");
    eventually("the quick answer", PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| m.text.contains("Quick answer"))
    })
    .await;
    // Absence can only be seen by waiting past the offer's delay.
    tokio::time::sleep(OFFER_DELAY + Duration::from_secs(1)).await;
    assert_eq!(offers_sent(&stack), 0);

    // Long: the offer appears with a Stop button; pressing it cancels the turn; it goes away.
    stack.llm.push(Script::stall());
    stack.owner_says("take forever");
    let offer = eventually("the Stop offer", PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| m.text.contains(zh().stop_offer()))
    })
    .await;
    let buttons = stack.telegram.buttons(OWNER_ID, offer.message_id);
    assert_eq!(buttons.len(), 1);
    assert_eq!(buttons[0].0, zh().stop_button());
    let press = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, offer.message_id, &buttons[0].1);
    let answered = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&press)?.answer
    })
    .await;
    assert_eq!(answered.as_deref(), Some(zh().stop_done()));
    stack
        .telegram
        .wait_for_call(
            "deleteMessage",
            |c| c.int_param("message_id") == Some(offer.message_id),
            PROMPT,
        )
        .await;
    assert_eq!(offers_sent(&stack), 1);
    stack.assert_no_secrets();
}
