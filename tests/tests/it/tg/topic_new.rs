//! Topics Kernel opens: kernel-tg reads `getMe.has_topics_enabled` at start (and learns from a
//! topic message that topics were turned on since); `/new` in the main chat with topics opens a
//! topic ("新对话"), binds a new session to it and confirms there; `/new` inside a topic gives
//! that topic a new session; without topics (or with `telegram.topics = "off"`) `/new` is
//! unchanged. When the session gets its title (or `/retitle`, also a bare one typed inside the
//! topic), its topic is renamed (`editForumTopic`, carried as an outbox item); a rename of a
//! deleted topic is dropped.

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_telegram::{Call, FakeTelegram, OWNER_ID};
use tests::stack::{LIVE_PREVIEW_OFF, PROMPT, Stack, outbox_drained, reply_target, rpc, text_of};
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
pub(super) async fn new_topic(stack: &Stack) -> i64 {
    let before = stack.telegram.call_count();
    stack.owner_says("/new");
    let created = stack
        .telegram
        .wait_for_call_since(before, "createForumTopic", |c| c.ok, PROMPT)
        .await;
    assert_eq!(created.params["name"], zh().new_topic_name());
    let thread = created.result.as_ref().unwrap()["message_thread_id"]
        .as_i64()
        .unwrap();
    eventually("the confirmation in the new topic", PROMPT, async || {
        sent(stack, zh().new_session())
            .iter()
            .any(|c| c.int_param("message_thread_id") == Some(thread))
    })
    .await;
    thread
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

/// The stack with topics and `[titles]` on `cheap` (auto memory off, so `cheap` answers
/// titles only).
pub(super) async fn stack_with_titles(cheap: &FakeLlm) -> Stack {
    let telegram = FakeTelegram::start(tests::config::TELEGRAM_TOKEN).await;
    telegram.enable_topics();
    let extra = format!(
        "[titles]\ntype = \"claude\"\napi_base = \"{}\"\napi_key = \"sk-titles-key-0123456789\"\n\
         model = \"cheap-model\"\nmax_tokens = 64\nretry = {{ max_retries = 0 }}\n\n\
         [memory_auto]\nenabled = false\n",
        cheap.url()
    );
    Stack::start_against(FakeLlm::start().await, telegram, "claude", &extra, |toml| {
        toml
    })
    .await
}

/// `#n` of the session titled `title` in a fresh listing.
fn number_of(stack: &Stack, title: &str) -> u64 {
    let list = rpc(stack, "ListSessions", json!({}));
    let sessions = list["sessions"].as_array().cloned().unwrap_or_default();
    sessions
        .iter()
        .find(|s| s["title"] == title)
        .and_then(|s| s["number"].as_u64())
        .unwrap_or_else(|| panic!("no session titled {title:?} in {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_from_new_is_renamed_by_its_title_and_by_retitle() {
    let cheap = FakeLlm::start().await;
    let stack = stack_with_titles(&cheap).await;
    let thread = new_topic(&stack).await;
    cheap.push(Script::text("Kyoto trip"));
    stack.llm.push(Script::text("temples first"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, "plan a trip to Kyoto");
    let renamed = stack
        .telegram
        .wait_for_call("editForumTopic", |c| c.ok, PROMPT)
        .await;
    assert_eq!(renamed.int_param("message_thread_id"), Some(thread));
    assert_eq!(
        stack.telegram.topic_name(OWNER_ID, thread).as_deref(),
        Some("Kyoto trip")
    );

    // `/retitle #n` renames it again; nothing about it is shown in the topic.
    let n = number_of(&stack, "Kyoto trip");
    cheap.push(Script::text("Kyoto itinerary"));
    assert_eq!(
        stack.command(&format!("/retitle #{n}")).await,
        zh().retitled("Kyoto itinerary")
    );
    eventually("the topic renamed again", PROMPT, async || {
        stack.telegram.topic_name(OWNER_ID, thread).as_deref() == Some("Kyoto itinerary")
    })
    .await;
    outbox_drained(&stack).await;
    let in_topic: Vec<String> = stack
        .telegram
        .messages_in_topic(OWNER_ID, thread)
        .into_iter()
        .map(|m| m.text)
        .filter(|t| !t.is_empty())
        .collect();
    assert!(
        in_topic.iter().all(|t| !t.contains("Kyoto itinerary")),
        "{in_topic:?}"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renaming_a_deleted_topic_is_dropped_once_without_a_message() {
    let cheap = FakeLlm::start().await;
    let stack = stack_with_titles(&cheap).await;
    let thread = new_topic(&stack).await;
    cheap.push(Script::text("Kyoto trip"));
    stack.llm.push(Script::text("temples first"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, "plan a trip to Kyoto");
    stack
        .telegram
        .wait_for_call("editForumTopic", |c| c.ok, PROMPT)
        .await;
    outbox_drained(&stack).await;

    stack.telegram.delete_topic(OWNER_ID, thread);
    let n = number_of(&stack, "Kyoto trip");
    cheap.push(Script::text("Kyoto itinerary"));
    let sends_before = stack.telegram.calls_of("sendMessage").len();
    assert_eq!(
        stack.command(&format!("/retitle #{n}")).await,
        zh().retitled("Kyoto itinerary")
    );
    let refused = stack
        .telegram
        .wait_for_call("editForumTopic", |c| !c.ok, PROMPT)
        .await;
    assert_eq!(refused.int_param("message_thread_id"), Some(thread));
    outbox_drained(&stack).await;
    // Tried once, never again; nothing but the /retitle reply was sent.
    let edits = stack.telegram.calls_of("editForumTopic");
    assert_eq!(
        edits.iter().filter(|c| !c.ok).count(),
        1,
        "{}",
        stack.telegram.call_log()
    );
    assert_eq!(
        stack.telegram.calls_of("sendMessage").len(),
        sends_before + 1,
        "{}",
        stack.telegram.call_log()
    );
}

/// The titles of the sessions in a fresh listing.
fn titles(stack: &Stack) -> Vec<String> {
    let list = rpc(stack, "ListSessions", json!({}));
    list["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["title"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retitle_inside_a_topic_renames_that_topics_session_not_the_main_chats() {
    let cheap = FakeLlm::start().await;
    let stack = stack_with_titles(&cheap).await;
    cheap.push(Script::text("Cherry talk"));
    stack.llm.push(Script::text("main chat answer"));
    stack.owner_says("main chat question about cherries");
    stack.answer_sent("main chat answer").await;
    eventually("the main chat's title", PROMPT, async || {
        titles(&stack).iter().any(|t| t == "Cherry talk")
    })
    .await;
    let thread = new_topic(&stack).await;
    cheap.push(Script::text("Kyoto trip"));
    stack.llm.push(Script::text("temples first"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, "plan a trip to Kyoto");
    eventually("the topic titled", PROMPT, async || {
        stack.telegram.topic_name(OWNER_ID, thread).as_deref() == Some("Kyoto trip")
    })
    .await;

    // `/retitle` with no number, typed inside the topic: the topic's session and the topic.
    cheap.push(Script::text("Kyoto itinerary"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, "/retitle");
    eventually("the /retitle reply in the topic", PROMPT, async || {
        sent(&stack, &zh().retitled("Kyoto itinerary"))
            .iter()
            .any(|c| c.int_param("message_thread_id") == Some(thread))
    })
    .await;
    eventually("the topic renamed again", PROMPT, async || {
        stack.telegram.topic_name(OWNER_ID, thread).as_deref() == Some("Kyoto itinerary")
    })
    .await;
    let titles = titles(&stack);
    assert!(titles.iter().any(|t| t == "Cherry talk"), "{titles:?}");
    assert!(titles.iter().all(|t| t != "Kyoto trip"), "{titles:?}");
}
