//! The answer's form in Telegram through both real binaries: live drafts (`sendMessageDraft`)
//! while a slow model streams — at most one a second, each valid Telegram HTML however the
//! text is cut — the same final messages with drafts on and off, the placeholder path against
//! a Bot API without drafts (chosen once), and the model's reasoning as an expandable
//! blockquote only when `telegram.show_reasoning` is on.

use std::time::Duration;

use kernel_common::config::Locale;
use tests::fake_llm::{FakeToolCall, Reply};
use tests::fake_telegram::Call;
use tests::stack::{LIVE_PREVIEW_OFF, PROMPT, Stack, reply_target, text_of};
use tests::told::Told;

/// A reply with a link, a table and a fence, streamed slowly enough for several drafts.
const ANSWER: &str = "Here is the plan, see [the docs](https://example.com/docs?a=1&b=2) \
and **mind the <tags>**.\n\n| Step | What |\n|------|------|\n| one | read the `config` |\n\
| two | run it |\n\n```rust\nfn main() {\n    println!(\"<hello> & bye\");\n}\n```\n\nDone.";

fn slow_answer() -> Reply {
    Reply::text(ANSWER).slow(4, Duration::from_millis(70))
}

async fn drafting_stack(extra: &str) -> Stack {
    Stack::start_edited("claude", extra, |toml| {
        toml.replace(LIVE_PREVIEW_OFF, "live_preview = true")
    })
    .await
}

/// The answer's sendMessage replying to `asked`.
async fn answer_to(stack: &Stack, asked: i64, needle: &str) -> Call {
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c).contains(needle),
            PROMPT,
        )
        .await
}

/// What the owner sees: each visible message's text and parse mode.
fn seen(stack: &Stack) -> Vec<(String, Option<String>)> {
    stack
        .visible()
        .into_iter()
        .map(|m| (m.text, m.parse_mode))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drafts_stream_at_most_once_a_second_and_the_final_messages_are_unchanged() {
    let stack = drafting_stack("").await;
    stack.llm.push(slow_answer());
    let asked = stack.owner_says("plan?");
    let answer = answer_to(&stack, asked, "Done.").await;

    let calls = stack.telegram.calls();
    let drafts: Vec<&Call> = calls
        .iter()
        .filter(|c| c.method == "sendmessagedraft")
        .collect();
    assert!(drafts.len() >= 2, "{}", stack.telegram.call_log());
    for draft in &drafts {
        // The fake checks each one as Telegram does: strict HTML, 1..=4096 units, private chat.
        assert!(draft.ok, "{}", draft.summary());
        assert_eq!(draft.str_param("parse_mode"), Some("HTML"));
        assert!(draft.at <= answer.at, "a draft after the answer");
    }
    assert!(
        drafts
            .iter()
            .all(|d| d.int_param("draft_id") == drafts[0].int_param("draft_id"))
    );
    assert_ne!(drafts[0].int_param("draft_id"), Some(0));
    for pair in drafts.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(gap >= Duration::from_millis(995), "drafts {gap:?} apart");
        assert_ne!(
            pair[0].text(),
            pair[1].text(),
            "an unchanged draft was sent again"
        );
    }
    let placeholder = Told::new(Locale::Zh).placeholder();
    assert!(
        !calls.iter().any(|c| c.text() == Some(placeholder)),
        "no placeholder with drafts: {}",
        stack.telegram.call_log()
    );
    let with_drafts = seen(&stack);

    let plain = Stack::start().await;
    plain.llm.push(slow_answer());
    let asked = plain.owner_says("plan?");
    answer_to(&plain, asked, "Done.").await;
    plain.turn_done().await;
    assert!(plain.telegram.calls_of("sendMessageDraft").is_empty());
    assert_eq!(with_drafts, seen(&plain));
    assert_eq!(with_drafts.len(), 1, "{with_drafts:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_method_the_placeholder_path_is_chosen_once() {
    let stack = drafting_stack("").await;
    stack.telegram.lack_drafts();
    let placeholder = Told::new(Locale::Zh).placeholder();
    for round in 0..2 {
        stack.llm.push(slow_answer());
        let since = stack.telegram.call_count();
        let asked = stack.owner_says(&format!("plan {round}?"));
        answer_to(&stack, asked, "Done.").await;
        let sent = stack
            .telegram
            .wait_for_call_since(
                since,
                "sendMessage",
                |c| c.ok && c.text() == Some(placeholder),
                PROMPT,
            )
            .await;
        let id = sent.sent_message_id();
        stack
            .telegram
            .wait_for_call_since(
                since,
                "deleteMessage",
                |c| c.ok && c.int_param("message_id") == id,
                PROMPT,
            )
            .await;
    }
    let drafts = stack.telegram.calls_of("sendMessageDraft");
    assert_eq!(drafts.len(), 1, "{}", stack.telegram.call_log());
    assert_eq!(drafts[0].error_code, Some(404));
    // Counted in the log files (the processes' output repeats each line).
    let dir = stack.cfg.data_dir().join("logs");
    let files: String = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect();
    assert_eq!(
        files.matches("the Bot API has no sendMessageDraft").count(),
        1,
        "{files}"
    );
    let visible = seen(&stack);
    assert_eq!(visible.len(), 2, "{visible:#?}");
}

/// Thinking on for the fake provider (its `max_tokens` raised above the budget).
fn thinking(extra: &str) -> String {
    format!("{extra}\n[providers.fake.thinking]\nbudget_tokens = 2048\n")
}

async fn thinking_stack(show_reasoning: bool) -> Stack {
    let extra = thinking("");
    Stack::start_edited("claude", &extra, move |toml| {
        let toml = toml.replace("max_tokens = 1024", "max_tokens = 4096");
        if show_reasoning {
            toml.replace(
                LIVE_PREVIEW_OFF,
                "live_preview = true\nshow_reasoning = true",
            )
        } else {
            toml.replace(LIVE_PREVIEW_OFF, "live_preview = true")
        }
    })
    .await
}

/// A tool loop with thinking in both model calls; returns the answer's call.
async fn thinking_turn(stack: &Stack) -> Call {
    stack.llm.push(
        Reply::default()
            .thinking("I should search memory for <tea>.", "sig-tg-1")
            .tool(FakeToolCall::new("memory_search", r#"{"query":"tea"}"#)),
    );
    stack.llm.push(
        Reply::text("You like **green** tea.").thinking("Nothing stored; answer.", "sig-tg-2"),
    );
    let asked = stack.owner_says("what tea do I like?");
    let answer = answer_to(stack, asked, "green").await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2, "both calls passed the fake's validation");
    assert_eq!(
        requests[1].body["messages"][1]["content"][0]["signature"],
        "sig-tg-1"
    );
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_is_an_expandable_blockquote_before_the_answer_when_enabled() {
    let stack = thinking_stack(true).await;
    let answer = thinking_turn(&stack).await;
    assert_eq!(text_of(&answer), "You like <b>green</b> tea.");
    let visible = seen(&stack);
    assert_eq!(visible.len(), 2, "{visible:#?}");
    assert_eq!(
        visible[0].0,
        "💭 思考过程\n<blockquote expandable>I should search memory for &lt;tea&gt;.\n\n\
         Nothing stored; answer.</blockquote>"
    );
    assert_eq!(visible[1].0, text_of(&answer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_stays_out_of_telegram_by_default() {
    let stack = thinking_stack(false).await;
    let answer = thinking_turn(&stack).await;
    let visible = seen(&stack);
    assert_eq!(visible, vec![(text_of(&answer), Some("HTML".to_owned()))]);
    assert!(!stack.telegram.call_log().contains("blockquote"));
    assert!(!stack.telegram.call_log().contains("Nothing stored"));
}
