//! Parallel conversations through the real binaries: topics of the owner's private chat (Bot
//! API 9.3), each its own session. Two topics' turns run at once and each answer lands in its
//! own topic; `/cancel` in one topic ends only that topic's turn.

use std::time::Duration;

use kernel_common::config::Locale;
use tests::fake_llm::{Reply, Script};
use tests::fake_telegram::{Call, OWNER_ID};
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// A reply that streams for about three seconds (ten deltas, 300 ms apart).
fn three_seconds(text: &str) -> Reply {
    let chunk = text.chars().count().div_ceil(10);
    Reply::text(text).slow(chunk, Duration::from_millis(300))
}

/// The ok sendMessage calls into topic `thread` whose text contains `needle`.
fn sent_in(stack: &Stack, thread: i64, needle: &str) -> Vec<Call> {
    stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| c.ok && c.int_param("message_thread_id") == Some(thread))
        .filter(|c| text_of(c).contains(needle))
        .collect()
}

/// The model request (index) whose body carries `needle`.
fn request_with(stack: &Stack, needle: &str) -> usize {
    let requests = stack.llm.requests();
    requests
        .iter()
        .position(|r| r.raw_body.contains(needle))
        .unwrap_or_else(|| panic!("no model request carries {needle:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_topics_run_at_once_and_each_answer_lands_in_its_own_topic() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    stack
        .llm
        .push(three_seconds("first answer from the slow model"));
    stack
        .llm
        .push(three_seconds("second answer from the slow model"));

    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha question about apples");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta question about bananas");

    // The second model call starts while the first answer still streams.
    stack.llm.wait_requests(2, PROMPT).await;
    let answers_so_far = stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| c.ok && text_of(c).contains("answer from the slow model"))
        .count();
    assert_eq!(answers_so_far, 0, "{}", stack.telegram.call_log());

    let first = request_with(&stack, "alpha question about apples");
    let second = request_with(&stack, "beta question about bananas");
    assert_ne!(first, second);
    let requests = stack.llm.requests();
    // Topic B's session never saw topic A's messages (and the other way round).
    assert!(!requests[second].raw_body.contains("apples"));
    assert!(!requests[first].raw_body.contains("bananas"));
    let words = ["first answer", "second answer"];
    let (a_words, b_words) = if first < second {
        (words[0], words[1])
    } else {
        (words[1], words[0])
    };
    eventually(
        "both answers delivered in their topics",
        PROMPT,
        async || !sent_in(&stack, a, a_words).is_empty() && !sent_in(&stack, b, b_words).is_empty(),
    )
    .await;
    // Nothing crossed, nothing was refused as busy, nothing went to the main chat.
    assert!(sent_in(&stack, a, b_words).is_empty());
    assert!(sent_in(&stack, b, a_words).is_empty());
    let calls = stack.telegram.calls_of("sendMessage");
    assert!(
        calls.iter().all(|c| text_of(c) != zh().busy()),
        "{}",
        stack.telegram.call_log()
    );
    assert!(
        calls
            .iter()
            .filter(|c| c.ok && c.int_param("message_thread_id").is_none())
            .all(|c| !text_of(c).contains("answer from the slow model")),
        "{}",
        stack.telegram.call_log()
    );
    // The topic service messages were dropped silently: nothing answered them.
    assert_eq!(
        stack.telegram.messages_in_topic(OWNER_ID, a).len(),
        stack
            .telegram
            .messages_in_topic(OWNER_ID, a)
            .iter()
            .filter(|m| m.text.contains(a_words) || m.text == zh().placeholder())
            .count(),
        "{}",
        stack.telegram.call_log()
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_in_a_topic_ends_only_that_topics_turn() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    stack.llm.push(Script::stall());
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha takes forever");
    stack.llm.wait_requests(1, PROMPT).await;
    stack.llm.push(three_seconds("beta answer arrives anyway"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta question");
    stack.llm.wait_requests(2, PROMPT).await;

    let cancel = stack.telegram.user_text_in_topic(OWNER_ID, a, "/cancel");
    let reply = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(cancel),
            PROMPT,
        )
        .await;
    assert_eq!(text_of(&reply), zh().cancelled());
    assert_eq!(reply.int_param("message_thread_id"), Some(a));
    eventually("B's answer in topic B", PROMPT, async || {
        !sent_in(&stack, b, "beta answer arrives anyway").is_empty()
    })
    .await;
    // A's turn ended without an answer; its stalled model stream was closed (by agentd: the
    // fake still runs), B's was not.
    assert!(sent_in(&stack, a, "beta answer").is_empty());
    let a_request = request_with(&stack, "alpha takes forever");
    eventually("A's model stream to be closed", PROMPT, async || {
        stack.llm.served()[a_request].dropped.is_some()
    })
    .await;
    let b_request = request_with(&stack, "beta question");
    let served = stack.llm.served();
    assert!(served[b_request].finished.is_some(), "{served:?}");
    assert!(served[b_request].dropped.is_none(), "{served:?}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_for_a_deleted_topic_arrives_in_the_main_chat() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let (script, release) = Script::hold("the answer outlived its topic");
    stack.llm.push(script);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "a question in a topic");
    stack.llm.wait_requests(1, PROMPT).await;
    stack.telegram.delete_topic(OWNER_ID, a);
    release.release();
    let answer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("the answer outlived its topic"),
            PROMPT,
        )
        .await;
    assert_eq!(answer.int_param("message_thread_id"), None);
    // It was tried in the topic first, and not again after the main chat took it.
    let refused = stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| !c.ok && text_of(c).contains("the answer outlived its topic"))
        .count();
    assert_eq!(refused, 1, "{}", stack.telegram.call_log());
    stack.assert_no_secrets();
}
