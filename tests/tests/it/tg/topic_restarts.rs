//! Topics when kernel-agentd goes away, through the real binaries: "run again" on a topic
//! turn's cut-off notice runs it in the topic's session and answers in the topic (beside a main
//! chat turn), and messages kernel-tg holds while agentd is down never join a turn of another
//! topic: each reaches its own topic's session once agentd is back.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::{OWNER_ID, SentMessage};
use tests::stack::{PROMPT, Stack};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// Waits for the bot's message whose text contains `needle`.
async fn message_with(stack: &Stack, needle: &str) -> SentMessage {
    eventually(&format!("a message with {needle:?}"), PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| !m.deleted && m.text.contains(needle))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_again_on_a_topic_turns_cut_off_notice_runs_in_the_topic_and_answers_there() {
    let mut stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    stack.llm.push(Script::text("alpha earlier answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha earlier question");
    message_with(&stack, "alpha earlier answer").await;
    let (cut, _never) = Script::hold("an answer the crash cuts off");
    stack.llm.push(cut);
    let asked = stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha second question");
    stack.llm.wait_requests(2, PROMPT).await;
    stack.kill_agentd();
    stack.start_agentd();

    let (notice, data) = eventually("the cut-off notice with its button", PROMPT, async || {
        let notice = stack
            .visible()
            .into_iter()
            .find(|m| m.text == zh().turn_cut_off())?;
        let (_, data) = stack
            .telegram
            .buttons(OWNER_ID, notice.message_id)
            .into_iter()
            .next()?;
        Some((notice, data))
    })
    .await;
    assert_eq!(notice.thread_id, Some(a));

    // A turn runs in the main chat meanwhile: the topic's turn does not wait for it.
    let (main, release_main) = Script::hold("main chat answer");
    stack.llm.push(main);
    stack.owner_says("main chat question");
    stack.llm.wait_requests(3, PROMPT).await;

    stack.llm.push(Script::text("alpha answer run again"));
    let pressed = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, notice.message_id, &data);
    let toast = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&pressed)?.answer
    })
    .await;
    assert_eq!(toast.as_deref(), Some(zh().rerun_started()));
    let answer = message_with(&stack, "alpha answer run again").await;
    assert_eq!(answer.thread_id, Some(a));
    assert_eq!(answer.reply_to, Some(asked));
    // It ran in the topic's session: with the topic's conversation, without the main chat's.
    let requests = stack.llm.requests();
    let rerun = &requests[3].raw_body;
    assert!(rerun.contains("alpha second question"), "{rerun}");
    assert!(rerun.contains("alpha earlier question"), "{rerun}");
    assert!(!rerun.contains("main chat question"), "{rerun}");

    release_main.release();
    let main = message_with(&stack, "main chat answer").await;
    assert_eq!(main.thread_id, None);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_held_while_agentd_is_down_reach_each_topics_own_session() {
    let mut stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    // The topics are seen (and bound) before agentd goes away.
    assert!(stack.command("/help").await.contains("/cancel"));
    stack.kill_agentd();

    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha while away");
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta while away");
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha once more");
    // kernel-tg holds all three (its hand-over retried a few times, each retry taking what
    // came meanwhile) before agentd comes back.
    eventually("kernel-tg to retry the held turn", PROMPT, async || {
        stack.logs().matches("the turn waits").count() >= 3
    })
    .await;
    // All three taken from the Bot API, then one more retry, which joins what came meanwhile:
    // a loaded machine may poll the last message late.
    eventually("kernel-tg to take all three", PROMPT, async || {
        stack.logs().matches("messages taken for a turn").count() >= 3
    })
    .await;
    let retries = stack.logs().matches("the turn waits").count();
    eventually("one more retry after that", PROMPT, async || {
        stack.logs().matches("the turn waits").count() > retries
    })
    .await;
    stack.llm.push(Script::text("answer number one"));
    stack.llm.push(Script::text("answer number two"));
    stack.start_agentd();

    let one = message_with(&stack, "answer number one").await;
    let two = message_with(&stack, "answer number two").await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2, "one turn per topic");
    let (alpha, beta) = if requests[0].raw_body.contains("alpha while away") {
        ((&requests[0].raw_body, &one), (&requests[1].raw_body, &two))
    } else {
        ((&requests[1].raw_body, &two), (&requests[0].raw_body, &one))
    };
    // Topic A's two messages are one turn in A's session; B's is its own, in B's.
    assert!(alpha.0.contains("alpha once more"), "{}", alpha.0);
    assert!(!alpha.0.contains("beta while away"), "{}", alpha.0);
    assert!(beta.0.contains("beta while away"), "{}", beta.0);
    assert!(!beta.0.contains("alpha"), "{}", beta.0);
    assert_eq!(alpha.1.thread_id, Some(a));
    assert_eq!(beta.1.thread_id, Some(b));
    stack.updates_confirmed().await;
    stack.assert_no_secrets();
}
