//! Items that are not a topic turn's answer still go back to the topic they belong to: a
//! reminder the model sets in topic B arrives in topic B (one set in a topic deleted since
//! arrives in the main chat, with a note naming the topic as it was — the name Kernel gave a
//! topic it opened, or renamed one to, is known too), and so does a file the model sends there; after a kill -9 of
//! agentd during two parallel topic turns each is reported as cut off in its own topic, with
//! its "run again" button. A file for a topic deleted meanwhile arrives in the main chat. A
//! message beyond `max_parallel_turns` is told it waits, in its topic, and runs once a slot frees.

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::{FakeLlm, FakeToolCall, Release, Reply, Script};
use tests::fake_telegram::{Call, OWNER_ID};
use tests::stack::{PROMPT, Stack, text_of};
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

/// The model, asked in topic `thread`, sets a reminder `message` due in two seconds.
async fn remind_in(stack: &Stack, thread: i64, message: &str) {
    remind_in_after(stack, thread, message, "PT2S").await;
}

/// [`remind_in`], due after `when` (an ISO 8601 duration).
async fn remind_in_after(stack: &Stack, thread: i64, message: &str, when: &str) {
    stack.llm.push(Script::tool_call(
        "schedule_add",
        json!({"when": when, "message": message}).to_string(),
    ));
    stack.llm.push(Script::text("reminder set"));
    let before = sent(stack, "reminder set").len();
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, thread, &format!("remind me: {message}"));
    eventually("the model to confirm the reminder", PROMPT, async || {
        sent(stack, "reminder set").len() > before
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_set_in_a_topic_arrives_in_that_topic() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    remind_in(&stack, b, "water the plants in beta").await;
    let reminder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "water the plants in beta",
            PROMPT,
        )
        .await;
    assert_eq!(
        reminder.int_param("message_thread_id"),
        Some(b),
        "{}",
        stack.telegram.call_log()
    );

    // A reminder set in topic A, whose topic the owner deletes before it fires: the main chat.
    // The note names the topic as it was then: Kernel renamed "Alpha" by its session's title.
    remind_in(&stack, a, "call the bank from alpha").await;
    let name = eventually("topic A renamed by its title", PROMPT, async || {
        stack
            .telegram
            .topic_name(OWNER_ID, a)
            .filter(|n| n != "Alpha")
    })
    .await;
    stack.telegram.delete_topic(OWNER_ID, a);
    let reminder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("call the bank from alpha"),
            PROMPT,
        )
        .await;
    assert_eq!(reminder.int_param("message_thread_id"), None);
    assert_eq!(
        text_of(&reminder),
        format!(
            "call the bank from alpha\n\n{}",
            zh().topic_deleted_note(&name)
        ),
        "{}",
        stack.telegram.call_log()
    );
    // The topic reminded in is never noted: the note is for a deleted topic only.
    assert_eq!(
        sent(&stack, "water the plants in beta")
            .iter()
            .map(text_of)
            .collect::<Vec<_>>(),
        ["water the plants in beta"]
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_during_two_topic_turns_reports_each_cut_off_in_its_topic() {
    let mut stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    let (first, _never_a) = Script::hold("alpha's answer the crash cuts off");
    let (second, _never_b) = Script::hold("beta's answer the crash cuts off");
    stack.llm.push(first);
    stack.llm.push(second);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha: translate the letter");
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta: sum the invoices");
    stack.llm.wait_requests(2, PROMPT).await;
    stack.kill_agentd();
    stack.start_agentd();

    for thread in [a, b] {
        let notice = eventually("the cut-off notice in its topic", PROMPT, async || {
            stack
                .telegram
                .messages_in_topic(OWNER_ID, thread)
                .into_iter()
                .find(|m| m.text == zh().turn_cut_off())
        })
        .await;
        let buttons = stack.telegram.buttons(OWNER_ID, notice.message_id);
        assert_eq!(buttons.len(), 1, "{}", stack.telegram.call_log());
        assert_eq!(buttons[0].0, zh().rerun_button());
        assert!(buttons[0].1.starts_with("rerun:"), "{buttons:?}");
    }
    // Nothing about the cut-off turns went to the main chat.
    let main_notices = stack
        .visible()
        .into_iter()
        .filter(|m| m.thread_id.is_none() && m.text == zh().turn_cut_off())
        .count();
    assert_eq!(main_notices, 0, "{}", stack.telegram.call_log());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_model_sends_in_a_topic_arrives_in_that_topic() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    let workspace = stack.cfg.load().general.default_workspace;
    std::fs::write(workspace.join("beta.md"), "# beta\n").unwrap();
    stack.llm.push(Script::tool_call(
        "send_file",
        json!({"path": "beta.md"}).to_string(),
    ));
    stack.llm.push(Script::text("file sent"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "send me the beta notes");
    let document = stack
        .telegram
        .wait_for_call("sendDocument", |c| c.ok, PROMPT)
        .await;
    assert_eq!(document.params["document"]["file_name"], "beta.md");
    assert_eq!(document.int_param("message_thread_id"), Some(b));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_for_a_deleted_topic_arrives_in_the_main_chat() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let workspace = stack.cfg.load().general.default_workspace;
    std::fs::write(workspace.join("alpha.md"), "# alpha\n").unwrap();
    let release = Release::default();
    let send = FakeToolCall::new("send_file", json!({"path": "alpha.md"}).to_string());
    stack.llm.push(Script::Reply(
        Reply::text("sending it").tool(send).hold(release.clone()),
    ));
    stack.llm.push(Script::text("file sent"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "send me the alpha notes");
    stack.llm.wait_requests(1, PROMPT).await;
    stack.telegram.delete_topic(OWNER_ID, a);
    release.release();
    let document = stack
        .telegram
        .wait_for_call("sendDocument", |c| c.ok, PROMPT)
        .await;
    assert_eq!(document.params["document"]["file_name"], "alpha.md");
    assert_eq!(document.int_param("message_thread_id"), None);
    // Tried once in the topic, then the main chat took it.
    let refused = stack
        .telegram
        .calls_of("sendDocument")
        .into_iter()
        .filter(|c| !c.ok)
        .count();
    assert_eq!(refused, 1, "{}", stack.telegram.call_log());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_beyond_max_parallel_turns_is_told_it_waits_then_runs() {
    let stack = Stack::start_edited("claude", "", |t| {
        t.replacen("[general]\n", "[general]\nmax_parallel_turns = 1\n", 1)
    })
    .await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    let (held, release) = Script::hold("alpha answer at last");
    stack.llm.push(held);
    stack.llm.push(Script::text("beta answer after the wait"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha holds the only slot");
    stack.llm.wait_requests(1, PROMPT).await;
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta has to wait");
    let told = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("1 个对话同时在运行"),
            PROMPT,
        )
        .await;
    assert_eq!(told.int_param("message_thread_id"), Some(b));
    assert_eq!(stack.llm.requests().len(), 1, "B waited: no model call yet");
    release.release();
    let answer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("beta answer after the wait"),
            PROMPT,
        )
        .await;
    assert_eq!(answer.int_param("message_thread_id"), Some(b));
    assert!(
        sent(&stack, "alpha answer at last")
            .iter()
            .all(|c| c.int_param("message_thread_id") == Some(a))
    );
    assert!(sent(&stack, zh().busy()).is_empty());
    stack.assert_no_secrets();
}

/// Waits for the reminder `message` (sent with the deleted topic's note); checks it arrived in
/// the main chat, noting the topic `name`.
async fn noted_in_the_main_chat(stack: &Stack, message: &str, name: &str) {
    let reminder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains(message),
            PROMPT,
        )
        .await;
    assert_eq!(reminder.int_param("message_thread_id"), None);
    assert_eq!(
        text_of(&reminder),
        format!("{message}\n\n{}", zh().topic_deleted_note(name)),
        "{}",
        stack.telegram.call_log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_kernel_opened_is_known_by_the_name_kernel_gave_it() {
    let stack = Stack::start_with_topics().await;
    super::topic_new::new_topic(&stack).await;
    let listed = stack.command("/history").await;
    assert!(
        listed.contains(&format!("话题「{}」", zh().new_topic_name())),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_for_a_deleted_topic_kernel_renamed_names_it_by_its_title() {
    let cheap = FakeLlm::start().await;
    let stack = super::topic_new::stack_with_titles(&cheap).await;
    let thread = super::topic_new::new_topic(&stack).await;
    cheap.push(Script::text("Kyoto trip"));
    remind_in_after(&stack, thread, "book the Kyoto hotel", "PT6S").await;
    eventually("the topic renamed by its title", PROMPT, async || {
        stack.telegram.topic_name(OWNER_ID, thread).as_deref() == Some("Kyoto trip")
    })
    .await;
    stack.telegram.delete_topic(OWNER_ID, thread);
    noted_in_the_main_chat(&stack, "book the Kyoto hotel", "Kyoto trip").await;
}
