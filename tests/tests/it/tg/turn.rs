//! A turn through both real binaries as the owner sees it in Telegram: placeholder, typing, the
//! final HTML answer replying to the message, the placeholder gone; long answers in chunks.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::{Call, OWNER_ID};
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// Index of the first call of `method` matching `pred` in `calls`.
fn position(calls: &[Call], method: &str, pred: impl Fn(&Call) -> bool) -> usize {
    calls
        .iter()
        .position(|c| c.method == method && c.ok && pred(c))
        .unwrap_or_else(|| panic!("no {method} call; calls: {calls:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_gets_placeholder_typing_answer_and_the_placeholder_goes() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("**Hello** owner, `x < y`"));
    let asked = stack.owner_says("hi there");
    stack.turn_done().await;

    let calls = stack.telegram.calls();
    let placeholder = position(&calls, "sendmessage", |c| text_of(c) == zh().placeholder());
    let placeholder_id = calls[placeholder].sent_message_id().unwrap();
    assert_eq!(reply_target(&calls[placeholder]), Some(asked));
    let typing = position(&calls, "sendchataction", |c| {
        c.str_param("action") == Some("typing")
    });
    let answer = position(&calls, "sendmessage", |c| text_of(c).contains("Hello"));
    let deleted = position(&calls, "deletemessage", |c| {
        c.int_param("message_id") == Some(placeholder_id)
    });
    assert!(
        placeholder < typing && typing < deleted && answer < deleted,
        "{calls:#?}"
    );
    let answer = &calls[answer];
    assert_eq!(text_of(answer), "<b>Hello</b> owner, <code>x &lt; y</code>");
    assert_eq!(answer.str_param("parse_mode"), Some("HTML"));
    assert_eq!(reply_target(answer), Some(asked));

    let visible = stack.visible();
    assert_eq!(visible.len(), 1, "{visible:#?}");
    assert!(visible[0].text.contains("Hello"));
    assert!(
        calls
            .iter()
            .all(|c| c.chat_id().is_none_or(|id| id == OWNER_ID))
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_answer_arrives_in_valid_chunks_in_order_each_once() {
    let stack = Stack::start().await;
    let mut answer = String::new();
    let mut n = 0;
    while answer.chars().count() < 10_000 {
        n += 1;
        answer.push_str(&format!(
            "Paragraph {n}: the *quick* brown fox jumps over the lazy dog, again and again, \
             until the answer is long enough to need several Telegram messages.\n\n"
        ));
        if n % 15 == 0 {
            answer.push_str(&format!(
                "```rust\nfn block_{n}() -> u32 {{ {n} }}\n```\n\n"
            ));
        }
    }
    stack.llm.push(Script::text(answer.clone()));
    let asked = stack.owner_says("write a lot");
    let chunks = stack.turn_done().await;
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    assert_eq!(chunks[0].reply_to, Some(asked));
    assert!(
        chunks
            .iter()
            .all(|m| m.parse_mode.as_deref() == Some("HTML"))
    );
    let all: String = chunks
        .iter()
        .map(|m| m.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut last = 0;
    for i in 1..=n {
        let marker = format!("Paragraph {i}:");
        assert_eq!(all.matches(&marker).count(), 1, "{marker} not exactly once");
        let at = all.find(&marker).unwrap();
        assert!(at >= last, "{marker} out of order");
        last = at;
    }
    // The fake validated every chunk strictly; none was refused or re-sent.
    let sends = stack.telegram.calls_of("sendMessage");
    assert!(sends.iter().all(|c| c.ok), "{}", stack.telegram.call_log());
    assert_eq!(
        sends.len(),
        chunks.len() + 1,
        "placeholder + each chunk once"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_shows_the_error_in_place_of_the_placeholder() {
    let stack = Stack::start().await;
    // The first refusal compacts and retries, the second retries with the message alone.
    for _ in 0..3 {
        stack.llm.push(Script::raw_error(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}"#,
        ));
    }
    stack.owner_says("hi");
    let edit = stack
        .telegram
        .wait_for_call("editMessageText", |c| text_of(c).contains("⚠️"), PROMPT)
        .await;
    // The context-too-long reason, said in the owner's locale with what to do.
    assert!(text_of(&edit).contains("/new"), "{}", text_of(&edit));
    let visible = stack.visible();
    assert_eq!(visible.len(), 1, "{visible:#?}");
    stack.assert_no_secrets();
}
