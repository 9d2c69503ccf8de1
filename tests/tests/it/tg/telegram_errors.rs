//! Telegram refusing or throttling kernel-tg: a chunk whose HTML is rejected is re-sent as plain
//! text; a 429 is waited out and retried; nothing arrives twice and nothing is lost.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::Failure;
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_rejected_as_html_is_resent_as_plain_text() {
    let stack = Stack::start().await;
    stack.telegram.inject_when(
        "sendMessage",
        |p| p["parse_mode"] == "HTML" && p["text"].as_str().is_some_and(|t| t.contains("Second")),
        Failure::BadRequest(
            "can't parse entities: Unsupported start tag \"x\" at byte offset 3".into(),
        ),
        1,
    );
    let mut answer = String::from("First part is **bold**.\n\n");
    answer.push_str(&"filler words here. ".repeat(230));
    answer.push_str("\n\nSecond part has `code` and **bold**.");
    stack.llm.push(Script::text(answer));
    stack.owner_says("go");
    let visible = stack.turn_done().await;
    assert_eq!(visible.len(), 2, "{visible:#?}");
    assert_eq!(visible[0].parse_mode.as_deref(), Some("HTML"));
    assert!(visible[0].text.contains("<b>bold</b>"));
    let plain = &visible[1];
    assert_eq!(plain.parse_mode, None, "{plain:?}");
    assert!(
        plain.text.contains("Second part has code and bold."),
        "{}",
        plain.text
    );
    assert!(!plain.text.contains('<'), "{}", plain.text);
    let tries = stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| text_of(c).contains("Second part"))
        .count();
    assert_eq!(tries, 2, "{}", stack.telegram.call_log());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_waited_out_and_the_answer_arrives_once() {
    let stack = Stack::start().await;
    stack.telegram.inject_when(
        "sendMessage",
        |p| {
            p["text"]
                .as_str()
                .is_some_and(|t| t.contains("throttled answer"))
        },
        Failure::RetryAfter(1),
        1,
    );
    stack.llm.push(Script::text("the throttled answer"));
    stack.owner_says("go");
    stack.turn_done().await;

    let attempts: Vec<_> = stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| text_of(c).contains("throttled answer"))
        .collect();
    assert_eq!(attempts.len(), 2, "{}", stack.telegram.call_log());
    assert_eq!(attempts[0].error_code, Some(429));
    assert!(attempts[1].ok);
    let visible = stack.visible();
    assert_eq!(visible.len(), 1, "{visible:#?}");
    assert_eq!(visible[0].text, "the throttled answer");
    assert!(stack.logs().contains("Telegram flood control; waiting"));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_shows_the_running_tool_and_a_dropped_edit_is_retried() {
    let stack = Stack::start().await;
    stack
        .telegram
        .inject("editMessageText", Failure::Disconnect, 1);
    stack
        .llm
        .push(Script::tool_call("memory_search", r#"{"query":"tea"}"#));
    let (held, release) = Script::hold("done searching");
    stack.llm.push(held);
    stack.owner_says("search my memory");
    let shown = stack
        .telegram
        .wait_for_call("editMessageText", |c| c.ok, PROMPT)
        .await;
    assert!(
        text_of(&shown).contains("memory_search"),
        "{}",
        text_of(&shown)
    );
    let edits = stack.telegram.calls_of("editMessageText");
    assert!(
        edits[0].injected && !edits[0].ok,
        "{}",
        stack.telegram.call_log()
    );
    release.release();
    let visible = stack.turn_done().await;
    assert_eq!(visible.len(), 1, "{visible:#?}");
    assert_eq!(visible[0].text, "done searching");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_still_arrives_when_the_placeholder_is_refused() {
    let stack = Stack::start().await;
    let placeholder = Told::new(Locale::Zh).placeholder();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == placeholder,
        Failure::Api {
            code: 403,
            description: "Forbidden: bot was blocked by the user".into(),
        },
        1,
    );
    stack.llm.push(Script::text("here anyway"));
    let asked = stack.owner_says("hi");
    let answer = stack.reply_to(asked).await;
    assert_eq!(text_of(&answer), "here anyway");
    assert!(stack.telegram.calls_of("deleteMessage").is_empty());
    assert_eq!(stack.visible().len(), 1);
    stack.assert_no_secrets();
}
