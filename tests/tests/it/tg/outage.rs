//! A Bot API outage: Telegram answers 503 (its JSON error, or a proxy's HTML page) for a while
//! and the answer still arrives exactly once afterwards, with no failure notice; a part refused
//! for good gets exactly one notice, retried through a 503 like any part; an ack agentd missed
//! (killed while Telegram took a chunk) is kept and the chunk is not sent again.

use std::time::Duration;

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_telegram::Failure;
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

/// Long enough for retries that each wait out teloxide's 10 s pause on a 5xx.
const OUTAGE_PATIENCE: Duration = Duration::from_secs(150);

/// The methods a turn's delivery uses.
const SENDING: [&str; 5] = [
    "sendMessage",
    "editMessageText",
    "deleteMessage",
    "sendChatAction",
    "sendMessageDraft",
];

async fn answer_survives(failure: Failure, period: Duration) {
    let stack = Stack::start().await;
    for method in SENDING {
        stack.telegram.fail_for(method, failure.clone(), period);
    }
    stack.llm.push(Script::text("the answer after the outage"));
    stack.owner_says("are you there?");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "the answer after the outage",
            OUTAGE_PATIENCE,
        )
        .await;
    let refused = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .any(|c| c.injected && text_of(c) == "the answer after the outage");
    assert!(
        refused,
        "the answer met the outage: {}",
        stack.telegram.call_log()
    );
    // A later turn is delivered after the first item is finished (items go in order).
    stack.llm.push(Script::text("second answer"));
    stack.owner_says("and now?");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "second answer",
            OUTAGE_PATIENCE,
        )
        .await;
    let sent: Vec<String> = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok)
        .map(text_of)
        .collect();
    let answers = sent
        .iter()
        .filter(|t| *t == "the answer after the outage")
        .count();
    assert_eq!(answers, 1, "{sent:#?}");
    let notice = Told::new(Locale::Zh).delivery_failed(1, 1);
    let marker = notice.split(' ').next().unwrap_or("⚠️");
    for message in stack.visible() {
        assert!(
            !message.text.contains("未能发送") && !message.text.starts_with(marker),
            "a failure notice: {message:#?}"
        );
    }
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_api_answering_503_for_30_s_delays_the_answer_and_loses_nothing() {
    answer_survives(
        Failure::Api {
            code: 503,
            description: "Service Temporarily Unavailable".into(),
        },
        Duration::from_secs(30),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_error_page_is_retried_like_a_503() {
    answer_survives(Failure::Page(502), Duration::from_secs(25)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_chunk_gets_one_notice_that_outlasts_a_503() {
    let stack = Stack::start().await;
    let answer = format!(
        "first part: {}\n\nsecond part: {}",
        "words for the owner. ".repeat(190),
        "more words for the owner. ".repeat(150)
    );
    let chunks: Vec<String> = kernel_render::render(&answer)
        .into_iter()
        .map(|c| c.html)
        .collect();
    assert_eq!(chunks.len(), 2);
    let second = chunks[1].clone();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == second.as_str(),
        Failure::BadRequest("message is too long".into()),
        1,
    );
    let notice = Told::new(Locale::Zh).delivery_failed(1, 2);
    let refused_notice = notice.clone();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == refused_notice.as_str(),
        Failure::Api {
            code: 503,
            description: "Service Temporarily Unavailable".into(),
        },
        1,
    );
    stack.llm.push(Script::text(answer));
    stack.owner_says("a long one, please");
    let wanted = notice.clone();
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            move |c| c.ok && text_of(c) == wanted,
            OUTAGE_PATIENCE,
        )
        .await;
    // A later turn is delivered once the first item is finished.
    stack.llm.push(Script::text("second answer"));
    stack.owner_says("and now?");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "second answer",
            OUTAGE_PATIENCE,
        )
        .await;
    let visible: Vec<String> = stack.visible().into_iter().map(|m| m.text).collect();
    let notices = visible.iter().filter(|t| **t == notice).count();
    assert_eq!(notices, 1, "{visible:#?}");
    assert!(
        visible.iter().any(|t| t.starts_with("first part:")),
        "{visible:#?}"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_lost_to_an_agentd_outage_does_not_send_the_chunk_again() {
    let mut stack = Stack::start().await;
    let answer = (1..=3)
        .map(|n| format!("Part {n}: {}", "words for the owner. ".repeat(190)))
        .collect::<Vec<_>>()
        .join("\n\n");
    let chunks: Vec<String> = kernel_render::render(&answer)
        .into_iter()
        .map(|c| c.html)
        .collect();
    assert!(chunks.len() >= 3, "{}", chunks.len());
    let second = chunks[1].clone();
    let held = stack
        .telegram
        .hold_when("sendMessage", move |p| p["text"] == second.as_str());
    stack.llm.push(Script::text(answer));
    stack.owner_says("a long one");
    // Telegram takes the second chunk while agentd is gone: its ack cannot be recorded.
    held.arrived(PROMPT).await;
    stack.kill_agentd();
    held.release();
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.ok && text_of(c) == chunks[1], PROMPT)
        .await;
    stack.start_agentd();
    let last = chunks.last().unwrap().clone();
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.ok && text_of(c) == last, PROMPT)
        .await;
    let sent: Vec<String> = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok)
        .map(text_of)
        .collect();
    for chunk in &chunks {
        let times = sent.iter().filter(|t| *t == chunk).count();
        assert_eq!(times, 1, "each chunk once: {sent:#?}");
    }
    stack.assert_no_secrets();
}
