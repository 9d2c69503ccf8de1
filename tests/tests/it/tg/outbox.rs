//! Every message to the owner arrives, once: kernel-tg killed with SIGKILL at each point of a
//! turn and restarted, kernel-agentd killed after the answer was stored, both restarted over 50
//! turns, a blocked bot, and grpcurl following the outbox.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use futures::StreamExt as _;
use kernel_common::config::Locale;
use kernel_proto::v1 as pb;
use tests::fake_cli::{FakeCli, WAIT_FOR_GO, print};
use tests::fake_llm::{FakeLlm, Release, Script};
use tests::fake_telegram::{Failure, SentMessage};
use tests::process::{AgentdProcess, grpcurl_path};
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// A Markdown answer that renders to `parts` chunks; returns it and the chunks' HTML.
fn long_answer(parts: usize) -> (String, Vec<String>) {
    let answer = (1..=parts)
        .map(|n| format!("Part {n}: {}", "words for the owner. ".repeat(190)))
        .collect::<Vec<_>>()
        .join("\n\n");
    let chunks: Vec<String> = kernel_render::render(&answer)
        .into_iter()
        .map(|c| c.html)
        .collect();
    assert!(chunks.len() >= parts.min(2), "{}", chunks.len());
    (answer, chunks)
}

/// Waits until the last chunk is sent and a placeholder deleted after it; returns the chat.
async fn delivered(stack: &Stack, chunks: &[String]) -> Vec<SentMessage> {
    let last = chunks.last().expect("chunks").clone();
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.ok && text_of(c) == last, PROMPT)
        .await;
    let at = stack
        .telegram
        .calls()
        .iter()
        .position(|c| c.method == "sendmessage" && c.ok && text_of(c) == last)
        .expect("the last chunk");
    stack
        .telegram
        .wait_for_call_since(at, "deleteMessage", |c| c.ok, PROMPT)
        .await;
    stack.visible()
}

/// Every chunk arrived in order, none more than twice, at most `duplicates` repeated, and
/// nothing else (no stale placeholder, no error) is left in the chat.
fn assert_exactly(visible: &[SentMessage], chunks: &[String], duplicates: usize) {
    let texts: Vec<&str> = visible.iter().map(|m| m.text.as_str()).collect();
    let mut collapsed = texts.clone();
    collapsed.dedup();
    assert_eq!(collapsed, chunks, "the chat: {texts:#?}");
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &texts {
        *counts.entry(t).or_default() += 1;
    }
    assert!(counts.values().all(|&n| n <= 2), "{texts:#?}");
    assert!(texts.len() - chunks.len() <= duplicates, "{texts:#?}");
}

/// Held text: the model request is out and the first delta streamed.
fn held(text: &str) -> (Script, Release) {
    Script::hold(text.to_owned())
}

/// Waits until the bot shows the turn: its placeholder is sent and recorded by agentd (typing
/// starts only after that).
async fn shown(stack: &Stack) {
    stack
        .telegram
        .wait_for_call("sendChatAction", |c| c.ok, PROMPT)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_before_the_placeholder_the_restarted_bot_shows_and_delivers_the_turn() {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(2);
    let (script, release) = held(&answer);
    stack.llm.push(script);
    let placeholder = zh().placeholder();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == placeholder,
        Failure::RetryAfter(60),
        1,
    );
    stack.owner_says("long question");
    stack.llm.wait_requests(1, PROMPT).await;
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.injected, PROMPT)
        .await;
    // The message was taken (without agentd's idempotency keys a redelivery would be a second
    // turn).
    stack.updates_confirmed().await;
    stack.kill_bot();
    stack.start_bot().await;
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.ok && text_of(c) == placeholder, PROMPT)
        .await;
    release.release();
    let visible = delivered(&stack, &chunks).await;
    assert_exactly(&visible, &chunks, 0);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_text_streams_the_restarted_bot_re_attaches_and_delivers() {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(2);
    let (script, release) = held(&answer);
    stack.llm.push(script);
    let asked = stack.owner_says("long question");
    let placeholder = stack.reply_to(asked).await.sent_message_id().unwrap();
    stack.llm.wait_requests(1, PROMPT).await;
    shown(&stack).await;
    stack.kill_bot();
    stack.start_bot().await;
    release.release();
    let visible = delivered(&stack, &chunks).await;
    assert_exactly(&visible, &chunks, 0);
    let deleted = stack.telegram.calls_of("deleteMessage");
    assert!(
        deleted
            .iter()
            .any(|c| c.ok && c.int_param("message_id") == Some(placeholder)),
        "the first bot's placeholder is removed by the second: {}",
        stack.telegram.call_log()
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_cli_delegation_the_restarted_bot_shows_it_and_delivers() {
    let cli = FakeCli::new(&format!("{}{WAIT_FOR_GO}", print("working")));
    let mut stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    let (answer, chunks) = long_answer(2);
    stack.llm.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "refactor the parser", "cwd": null}"#,
    ));
    stack.llm.push(Script::text(answer));
    let asked = stack.owner_says("refactor it");
    let placeholder = stack.reply_to(asked).await.sent_message_id().unwrap();
    let running = zh().cli_running();
    let shows_cli = move |c: &tests::fake_telegram::Call| {
        c.ok && c.int_param("message_id") == Some(placeholder) && text_of(c) == running
    };
    stack
        .telegram
        .wait_for_call("editMessageText", shows_cli, PROMPT)
        .await;
    stack.kill_bot();
    let since = stack.telegram.call_count();
    stack.start_bot().await;
    // The new bot re-attaches to the running turn (its placeholder is known to agentd).
    stack
        .telegram
        .wait_for_call_since(since, "sendChatAction", |c| c.ok, PROMPT)
        .await;
    cli.write_file("go", "");
    let visible = delivered(&stack, &chunks).await;
    assert_exactly(&visible, &chunks, 0);
    assert!(
        stack
            .telegram
            .calls_of("deleteMessage")
            .iter()
            .any(|c| c.ok && c.int_param("message_id") == Some(placeholder)),
        "{}",
        stack.telegram.call_log()
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_after_the_turn_completed_the_restarted_bot_delivers_the_stored_answer() {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(2);
    let (script, release) = held(&answer);
    stack.llm.push(script);
    stack.owner_says("long question");
    stack.llm.wait_requests(1, PROMPT).await;
    shown(&stack).await;
    stack.kill_bot();
    let mut outbox = subscribe(&stack).await;
    release.release();
    let item = next_item(&mut outbox).await;
    assert_eq!(item.parts_done, 0);
    assert!(item.placeholder_message_id.is_some(), "{item:?}");
    let mut client = tests::fault::connect(stack.cfg.socket()).await;
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.undelivered, 1);
    assert!(status.oldest_undelivered_seconds.is_some());
    restart_bot_and_expect_every_chunk_once(&mut stack, &chunks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_between_two_chunks_the_rest_follows_in_order() {
    // The second chunk is being waited out (a 429): the first is sent and acknowledged.
    killed_while_a_chunk_is_rate_limited(3, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_a_429_on_the_first_chunk_is_waited_out_the_answer_still_arrives() {
    killed_while_a_chunk_is_rate_limited(2, 0).await;
}

/// An answer of `parts` chunks whose chunk `limited` Telegram answers with a 429; kernel-tg is
/// killed while it waits that out, and the restarted one delivers every chunk once, in order.
async fn killed_while_a_chunk_is_rate_limited(parts: usize, limited: usize) {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(parts);
    let target = chunks[limited].clone();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == target.as_str(),
        Failure::RetryAfter(60),
        1,
    );
    stack.llm.push(Script::text(answer));
    stack.owner_says("long question");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.injected, PROMPT)
        .await;
    stack.kill_bot();
    restart_bot_and_expect_every_chunk_once(&mut stack, &chunks).await;
}

/// Starts kernel-tg again and checks that every chunk reached the owner once, in order, with
/// no secret in any log.
async fn restart_bot_and_expect_every_chunk_once(stack: &mut Stack, chunks: &[String]) {
    stack.start_bot().await;
    let visible = delivered(stack, chunks).await;
    assert_exactly(&visible, chunks, 0);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agentd_killed_after_the_answer_was_stored_delivers_it_once_after_restart() {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(2);
    let (script, release) = held(&answer);
    stack.llm.push(script);
    stack.owner_says("question");
    stack.llm.wait_requests(1, PROMPT).await;
    shown(&stack).await;
    stack.kill_bot();
    let mut outbox = subscribe(&stack).await;
    release.release();
    next_item(&mut outbox).await;
    drop(outbox);
    stack.kill_agentd();
    stack.start_agentd();
    restart_bot_and_expect_every_chunk_once(&mut stack, &chunks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agentd_restarted_mid_delivery_the_answer_completes_with_at_most_one_duplicate() {
    let mut stack = Stack::start().await;
    let (answer, chunks) = long_answer(3);
    let second = chunks[1].clone();
    stack.telegram.inject_when(
        "sendMessage",
        move |p| p["text"] == second.as_str(),
        Failure::RetryAfter(2),
        1,
    );
    stack.llm.push(Script::text(answer));
    stack.owner_says("question");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.injected, PROMPT)
        .await;
    // kernel-tg waits out the 429 while agentd goes away and comes back.
    stack.kill_agentd();
    stack.start_agentd();
    let visible = delivered(&stack, &chunks).await;
    assert_exactly(&visible, &chunks, 1);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_bot_does_not_block_later_items() {
    let stack = Stack::start().await;
    stack.telegram.inject_when(
        "sendMessage",
        |p| p["text"] == "first answer",
        Failure::Api {
            code: 403,
            description: "Forbidden: bot was blocked by the user".into(),
        },
        1,
    );
    stack.llm.push(Script::text("first answer"));
    stack.owner_says("one");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.injected, PROMPT)
        .await;
    stack.llm.push(Script::text("second answer"));
    stack.owner_says("two");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "second answer",
            PROMPT,
        )
        .await;
    let logs = stack.logs();
    assert!(
        logs.lines()
            .any(|l| l.contains("ERROR") && l.contains("refused for good")),
        "{logs}"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_turns_with_both_processes_restarting_lose_no_answer() {
    let mut stack = Stack::start().await;
    for i in 0..50 {
        let answer = format!("answer number {i}");
        stack.llm.push(Script::text(answer.clone()));
        stack.owner_says(&format!("question {i}"));
        // The turn reached agentd before anything is killed.
        stack.llm.wait_requests(i + 1, PROMPT).await;
        if i % 2 == 0 {
            stack.kill_bot();
            stack.start_bot().await;
        }
        stack
            .telegram
            .wait_for_call("sendMessage", |c| c.ok && text_of(c) == answer, PROMPT)
            .await;
        if i % 5 == 4 {
            stack.kill_agentd();
            stack.start_agentd();
        }
    }
    let sent: Vec<String> = stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok)
        .map(text_of)
        .filter(|t| t.starts_with("answer number "))
        .collect();
    let mut distinct = sent.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 50, "{sent:#?}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpcurl_subscribes_and_sees_the_turn_and_its_outbox_item() {
    let llm = FakeLlm::start().await;
    let cfg = tests::config::TestConfig::new(&llm.url(), "");
    let path = cfg.path.clone();
    let _agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&path, &[]))
        .await
        .unwrap();
    let (script, release) = held("hello from the outbox");
    llm.push(script);
    let socket = cfg.socket().display().to_string();
    let base = ["-plaintext", "-unix", "-authority", "localhost", "-d"];
    let mut chat = Command::new(grpcurl_path())
        .args(base)
        .arg(r#"{"text": "hi", "deliverToOwner": {"replyToMessageId": "7"}}"#)
        .arg(&socket)
        .arg("kernel.v1.Agent/Chat")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    llm.wait_requests(1, PROMPT).await;
    let mut follow = Command::new(grpcurl_path())
        .args(base)
        .arg("{}")
        .arg(&socket)
        .arg("kernel.v1.Agent/Subscribe")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = follow.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = String::new();
    wait_for(&rx, &mut seen, "\"started\"");
    wait_for(&rx, &mut seen, "\"replyToMessageId\": \"7\"");
    release.release();
    wait_for(&rx, &mut seen, "\"item\"");
    wait_for(&rx, &mut seen, "hello from the outbox");
    assert!(seen.contains("\"seq\": \"1\""), "{seen}");
    let _ = follow.kill();
    let _ = follow.wait();
    let _ = chat.wait();
}

/// Reads grpcurl's output lines into `seen` until it contains `needle`.
fn wait_for(rx: &std::sync::mpsc::Receiver<String>, seen: &mut String, needle: &str) {
    while !seen.contains(needle) {
        let line = rx
            .recv_timeout(PROMPT)
            .unwrap_or_else(|_| panic!("no {needle:?} in:\n{seen}"));
        seen.push_str(&line);
        seen.push('\n');
    }
}

/// A client's own subscription to the stack's agentd.
async fn subscribe(stack: &Stack) -> tonic::Streaming<pb::DeliveryEvent> {
    let mut client = tests::fault::connect(stack.cfg.socket()).await;
    client
        .subscribe(pb::SubscribeRequest { after_seq: 0 })
        .await
        .expect("Subscribe")
        .into_inner()
}

/// The next outbox item on `stream` (live progress skipped).
async fn next_item(stream: &mut tonic::Streaming<pb::DeliveryEvent>) -> pb::OutboxItem {
    loop {
        let next = tokio::time::timeout(PROMPT, stream.next())
            .await
            .expect("an outbox item in time")
            .expect("the subscription goes on")
            .expect("no error");
        if let Some(pb::delivery_event::Event::Item(item)) = next.event {
            return item;
        }
    }
}
