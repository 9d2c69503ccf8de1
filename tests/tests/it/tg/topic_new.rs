//! Topics Kernel opens: kernel-tg reads `getMe.has_topics_enabled` at start (and learns from a
//! topic message that topics were turned on since); `/new` in the main chat with topics opens a
//! topic ("新对话"), binds a new session to it and confirms there; `/new` inside a topic gives
//! that topic a new session; without topics (or with `telegram.topics = "off"`) `/new` is
//! unchanged.

use kernel_common::config::Locale;
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_telegram::{Call, FakeTelegram, OWNER_ID};
use tests::stack::{LIVE_PREVIEW_OFF, PROMPT, Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The ok sendMessage calls whose text contains `needle`.
fn sent(stack: &Stack, needle: &str) -> Vec<Call> {
    stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| c.ok && text_of(c).contains(needle))
        .collect()
}

/// The owner sends `/new` in the main chat; returns the thread of the topic it opened.
async fn new_topic(stack: &Stack) -> i64 {
    let before = stack.telegram.call_count();
    stack.owner_says("/new");
    let created = stack
        .telegram
        .wait_for_call_since(before, "createForumTopic", |c| c.ok, PROMPT)
        .await;
    assert_eq!(created.params["name"], zh().new_topic_name());
    created.result.as_ref().unwrap()["message_thread_id"]
        .as_i64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_in_the_main_chat_opens_a_topic_with_a_new_session_and_answers_there() {
    let stack = Stack::start_with_topics().await;
    // A first conversation in the main chat.
    stack.llm.push(Script::text("main chat answer"));
    stack.owner_says("main chat question about cherries");
    stack.answer_sent("main chat answer").await;

    let thread = new_topic(&stack).await;
    assert_eq!(
        stack.telegram.topic_name(OWNER_ID, thread).as_deref(),
        Some(zh().new_topic_name())
    );
    // The confirmation is in the new topic, not in the main chat.
    eventually("the confirmation in the new topic", PROMPT, async || {
        sent(&stack, zh().new_session())
            .iter()
            .any(|c| c.int_param("message_thread_id") == Some(thread))
    })
    .await;
    assert!(
        sent(&stack, zh().new_session())
            .iter()
            .all(|c| c.int_param("message_thread_id") == Some(thread)),
        "{}",
        stack.telegram.call_log()
    );

    // A message in the topic runs in the new session (without the main chat's history) and is
    // answered there; the main chat keeps its session.
    stack.llm.push(Script::text("topic answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, "topic question about dates");
    eventually("the answer in the topic", PROMPT, async || {
        sent(&stack, "topic answer")
            .iter()
            .any(|c| c.int_param("message_thread_id") == Some(thread))
    })
    .await;
    let requests = stack.llm.requests();
    let topic_request = requests
        .iter()
        .find(|r| r.raw_body.contains("topic question about dates"))
        .unwrap();
    assert!(!topic_request.raw_body.contains("cherries"));
    stack.llm.push(Script::text("main chat again"));
    stack.owner_says("and in the main chat?");
    stack.answer_sent("main chat again").await;
    let last = stack.llm.requests().pop().unwrap();
    assert!(last.raw_body.contains("cherries"));
    assert!(!last.raw_body.contains("topic question about dates"));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_inside_a_topic_gives_that_topic_a_new_session() {
    let stack = Stack::start_with_topics().await;
    let topic = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    stack.llm.push(Script::text("first topic answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, topic, "topic question about figs");
    eventually("the first answer", PROMPT, async || {
        !sent(&stack, "first topic answer").is_empty()
    })
    .await;

    let new = stack.telegram.user_text_in_topic(OWNER_ID, topic, "/new");
    let reply = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(new),
            PROMPT,
        )
        .await;
    assert_eq!(text_of(&reply), zh().new_session());
    assert_eq!(reply.int_param("message_thread_id"), Some(topic));
    assert!(stack.telegram.calls_of("createForumTopic").is_empty());

    stack.llm.push(Script::text("second topic answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, topic, "topic question about grapes");
    eventually("the second answer in the topic", PROMPT, async || {
        sent(&stack, "second topic answer")
            .iter()
            .any(|c| c.int_param("message_thread_id") == Some(topic))
    })
    .await;
    let last = stack.llm.requests().pop().unwrap();
    assert!(last.raw_body.contains("grapes"));
    assert!(
        !last.raw_body.contains("figs"),
        "the topic's new session starts empty"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_topics_new_is_unchanged_until_a_topic_message_shows_them_on() {
    // getMe says no topics at start: /new answers in the main chat.
    let stack = Stack::start().await;
    assert_eq!(stack.command("/new").await, zh().new_session());
    assert!(stack.telegram.calls_of("createForumTopic").is_empty());

    // The owner turns topics on and writes in a topic: kernel-tg learns it from that message.
    stack.telegram.enable_topics();
    let topic = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    stack.llm.push(Script::text("topic answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, topic, "a topic question");
    eventually("the topic's answer", PROMPT, async || {
        !sent(&stack, "topic answer").is_empty()
    })
    .await;
    let thread = new_topic(&stack).await;
    assert_ne!(thread, topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_topics_off_new_never_opens_a_topic() {
    let telegram = FakeTelegram::start(tests::config::TELEGRAM_TOKEN).await;
    telegram.enable_topics();
    let stack = Stack::start_against(FakeLlm::start().await, telegram, "claude", "", |toml| {
        toml.replace(
            LIVE_PREVIEW_OFF,
            &format!("{LIVE_PREVIEW_OFF}\ntopics = \"off\""),
        )
    })
    .await;
    assert_eq!(stack.command("/new").await, zh().new_session());
    assert!(stack.telegram.calls_of("createForumTopic").is_empty());
    assert!(
        stack
            .telegram
            .calls_of("sendMessage")
            .iter()
            .all(|c| c.int_param("message_thread_id").is_none())
    );
}
