//! Ten owner messages, each followed 0.2–0.7 s later by a SIGKILL of kernel-agentd or kernel-tg
//! (alternating, both restarted): every message reaches the model at most once, every answer
//! reaches the owner or is reported as cut off, and no chunk arrives three times. A kill that
//! lands before the turn's model call (likely on a loaded machine) cuts the turn off before its
//! script is used; each message gets a fresh script so no answer is taken by the wrong question.

use std::time::Duration;

use kernel_common::config::Locale;
use serde_json::Value;
use tests::fake_llm::{Reply, Script};
use tests::stack::{Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::poll;

/// Long enough for a restart, intake's retry and a cut-off turn's report.
const SETTLE: Duration = Duration::from_secs(60);

/// The text of a request's last user message.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_messages_each_followed_by_a_kill_are_each_taken_once_and_answered_or_reported() {
    let mut stack = Stack::start().await;
    let cut_off = Told::new(Locale::Zh).turn_cut_off();
    let mut asked = Vec::new();
    for i in 0..10 {
        // A model that takes about a second, so that kills land mid-turn too.
        // A turn cut off before its model call (a kill that lands early, as on a loaded
        // machine) leaves its script queued; the next question must not take that answer.
        let stale = stack.llm.clear();
        if stale > 0 {
            eprintln!("message {} was cut off before its model call", i - 1);
        }
        let reply = Reply::text(format!("answer number {i}")).slow(3, Duration::from_millis(200));
        stack.llm.push(Script::from(reply));
        let id = stack.owner_says(&format!("question #{i}."));
        asked.push(id);
        // 0.2–0.7 s, spread over the runs.
        let after = Duration::from_millis(200 + (i as u64 * 173) % 500);
        tokio::time::sleep(after).await;
        if i % 2 == 0 {
            stack.kill_agentd();
            stack.start_agentd();
        } else {
            stack.kill_bot();
            stack.start_bot().await;
        }
        let answer = format!("answer number {i}");
        let settled = poll(SETTLE, async || {
            let answered = stack
                .telegram
                .calls_of("sendMessage")
                .iter()
                .any(|c| c.ok && text_of(c) == answer);
            let reported = stack
                .visible()
                .iter()
                .any(|m| m.text == cut_off && m.reply_to == Some(id));
            answered || reported
        })
        .await;
        if settled.is_none() {
            let asked: Vec<String> = stack
                .llm
                .requests()
                .iter()
                .map(|r| last_user_text(&r.body))
                .collect();
            let sent: Vec<String> = stack
                .telegram
                .calls_of("sendMessage")
                .iter()
                .map(|c| format!("{} {:?} -> {:?}", c.ok, text_of(c), reply_target(c)))
                .collect();
            panic!(
                "message {i} neither answered nor reported within {SETTLE:?}\n\
                 model asked: {asked:#?}\nsent: {sent:#?}\nscripts left: {}\nlogs:\n{}",
                stack.llm.pending(),
                stack.logs()
            );
        }
    }
    let requests = stack.llm.requests();
    for (i, &id) in asked.iter().enumerate() {
        let question = format!("question #{i}.");
        let taken = requests
            .iter()
            .filter(|r| last_user_text(&r.body).contains(&question))
            .count();
        // Taken once: it reached the model once, or its turn was cut off before the model
        // call and the owner was told (the cut-off notice replies to it).
        let reported = stack
            .visible()
            .iter()
            .any(|m| m.text == cut_off && m.reply_to == Some(id));
        assert!(
            taken == 1 || (taken == 0 && reported),
            "message {i} reached the model {taken} times (reported as cut off: {reported})"
        );
        let answer = format!("answer number {i}");
        let sent = stack
            .telegram
            .calls_of("sendMessage")
            .iter()
            .filter(|c| c.ok && text_of(c) == answer)
            .count();
        assert!(sent <= 2, "answer {i} arrived {sent} times");
    }
    // Replies go to their own question.
    for call in stack.telegram.calls_of("sendMessage") {
        let text = text_of(&call);
        if call.ok
            && let Some(n) = text.strip_prefix("answer number ")
            && let Ok(n) = n.parse::<usize>()
            && let Some(target) = reply_target(&call)
        {
            assert_eq!(target, asked[n], "{text}");
        }
    }
    let reported = stack.visible().iter().filter(|m| m.text == cut_off).count();
    eprintln!("cut off and reported: {reported} of 10");
    stack.assert_no_secrets();
}
