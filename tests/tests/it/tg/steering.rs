//! Talking to a running turn through both real binaries: `/steer` at the next step boundary
//! (skipped calls answered, the strict fake LLM accepting every request), the persisted `/next`
//! queue (in order, across an agentd restart, `/cancel all`), `ask_user` with buttons (owner-only
//! presses, a typed answer, the timeout) and the placeholder's Stop button.

use std::time::{Duration, Instant};

use kernel_common::config::Locale;
use serde_json::{Value, json};
use tests::fake_cli::{FakeCli, WAIT_FOR_GO, print};
use tests::fake_llm::{FakeToolCall, Reply, Script};
use tests::fake_speech::FakeSpeech;
use tests::fake_telegram::{OWNER_ID, SentMessage};
use tests::media::{SPEECH_KEY, speech_toml};
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The last message of the fake LLM's request `n` (0-based).
fn last_message(stack: &Stack, n: usize) -> Value {
    let requests = stack.llm.requests();
    let messages = requests[n].body["messages"].as_array().unwrap().clone();
    messages.last().unwrap().clone()
}

/// The `tool_result` blocks of an Anthropic user message, as `(tool_use_id, content, is_error)`.
fn tool_results(message: &Value) -> Vec<(String, String, bool)> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let content = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let id = b["tool_use_id"].as_str().unwrap().to_owned();
            (id, content, b["is_error"].as_bool().unwrap_or(false))
        })
        .collect()
}

/// Waits for the bot's message whose text contains `needle`.
async fn message_with(stack: &Stack, needle: &str) -> SentMessage {
    eventually(&format!("a message with {needle:?}"), PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| m.text.contains(needle))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_during_a_slow_tool_joins_the_next_request_and_skips_the_planned_calls() {
    let cli = FakeCli::new(&[WAIT_FOR_GO, &print("built")].concat());
    let stack = Stack::start_with("claude", &cli.toml("claude_code", &[], None)).await;
    stack.llm.push(
        Reply::default()
            .tool(FakeToolCall::new("delegate_to_cli", r#"{"task": "build it"}"#).id("toolu_slow"))
            .tool(FakeToolCall::new("skill_read", r#"{"name": "daily-brief"}"#).id("toolu_later")),
    );
    stack.llm.push(Script::text("Done the fast way"));
    let asked = stack.owner_says("build the project");
    eventually("the slow CLI to run", PROMPT, async || cli.pid()).await;

    assert_eq!(stack.command("/steer 用快速模式").await, zh().steered());
    cli.write_file("go", "");
    let answer = message_with(&stack, "Done the fast way").await;
    assert_eq!(answer.reply_to, Some(asked));

    // The second request: the slow call's result, the skipped call's, then the steer text.
    assert_eq!(stack.llm.requests().len(), 2);
    let last = last_message(&stack, 1);
    assert_eq!(last["role"], "user");
    let results = tool_results(&last);
    assert_eq!(results.len(), 2, "{last}");
    assert_eq!(results[0].0, "toolu_slow");
    assert!(!results[0].2 && results[0].1.contains("built"), "{last}");
    assert_eq!(results[1].0, "toolu_later");
    assert!(results[1].2 && results[1].1.contains("skipped: the owner steered"));
    let blocks = last["content"].as_array().unwrap();
    let steer = blocks.last().unwrap();
    assert_eq!(
        (&steer["type"], &steer["text"]),
        (&json!("text"), &json!("[主人插话] 用快速模式"))
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_with_nothing_running_runs_as_a_new_turn() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("A fresh answer"));
    let id = stack.owner_says("/steer 你好");
    let answer = message_with(&stack, "A fresh answer").await;
    assert_eq!(answer.reply_to, Some(id));
    // Both the command's reply and the new turn's placeholder reply to the /steer message.
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(id) && text_of(c) == zh().steer_started(),
            PROMPT,
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_messages_run_in_order_survive_an_agentd_restart_and_cancel_all_drops_the_rest() {
    let mut stack = Stack::start().await;
    let (first, release_first) = Script::hold("First done");
    stack.llm.push(first);
    stack.owner_says("a long task");
    stack.llm.wait_requests(1, PROMPT).await;

    let names = ["one", "two", "three", "four", "five", "six"];
    let mut ids = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let id = stack.owner_says(&format!("/next task {name}"));
        let reply = stack.reply_to(id).await;
        assert_eq!(text_of(&reply), zh().queued_next(i as u32 + 1));
        ids.push(id);
    }
    let status = stack.command("/status").await;
    assert!(
        status.contains("排队中：6") && status.contains("6. task six"),
        "{status}"
    );

    stack.llm.push(Script::text("Answer one"));
    stack.llm.push(Script::text("Answer two"));
    stack.llm.push(Script::text("Answer three"));
    let (four, _release_four) = Script::hold("Answer four");
    stack.llm.push(four);
    release_first.release();
    for (name, id) in [("one", ids[0]), ("two", ids[1]), ("three", ids[2])] {
        let answer = message_with(&stack, &format!("Answer {name}")).await;
        assert_eq!(answer.reply_to, Some(id), "{name}");
    }
    let sent: Vec<String> = stack.visible().into_iter().map(|m| m.text).collect();
    let order: Vec<usize> = ["First done", "Answer one", "Answer two", "Answer three"]
        .iter()
        .map(|t| sent.iter().position(|s| s.contains(t)).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{sent:#?}");
    // Each queued turn's model request carried its own text, in order.
    stack.llm.wait_requests(5, PROMPT).await;
    let requests = stack.llm.requests();
    for (n, name) in names[..4].iter().enumerate() {
        let body = requests[n + 1].raw_body.as_str();
        assert!(
            body.contains(&format!("task {name}")),
            "request {n}: {body}"
        );
    }

    // Four runs (held) when agentd dies; five and six wait in the database.
    stack.kill_agentd();
    let (five, _release_five) = Script::hold("Answer five");
    stack.llm.push(five);
    stack.start_agentd();
    stack.llm.wait_requests(6, PROMPT).await;
    let body = stack.llm.requests()[5].raw_body.clone();
    assert!(body.contains("task five"), "{body}");

    let id = stack.owner_says("/cancel all");
    let reply = text_of(&stack.reply_to(id).await);
    assert_eq!(reply, zh().queue_cleared(zh().cancelled(), 1));
    let status = stack.command("/status").await;
    assert!(!status.contains("排队中"), "{status}");
    // Nothing else runs: the next message is the next model request.
    stack.llm.push(Script::text("Back to normal"));
    stack.owner_says("hello again");
    message_with(&stack, "Back to normal").await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 7);
    assert!(!requests[6].raw_body.contains("task six"));
    stack.assert_no_secrets();
}

/// The question message (with its buttons) of the running turn.
async fn question(stack: &Stack, text: &str) -> (SentMessage, Vec<(String, String)>) {
    let message = message_with(stack, text).await;
    let buttons = stack.telegram.buttons(OWNER_ID, message.message_id);
    (message, buttons)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_buttons_answer_for_the_owner_only_and_go_away() {
    let stack = Stack::start().await;
    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Which colour?", "options": ["red", "green", "blue"]}"#,
    ));
    stack.llm.push(Script::text("Green it is"));
    let asked = stack.owner_says("paint the wall");
    let (message, buttons) = question(&stack, "Which colour?").await;
    assert_eq!(message.reply_to, Some(asked));
    let labels: Vec<&str> = buttons.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(labels, ["red", "green", "blue"]);
    assert!(buttons.iter().all(|(_, d)| (1..=64).contains(&d.len())));

    // Another user's press, and a press in another chat, are ignored.
    let stranger = stack
        .telegram
        .press(777, OWNER_ID, message.message_id, &buttons[2].1);
    let elsewhere = json!({
        "callback_query": {
            "id": "999",
            "from": {"id": OWNER_ID, "is_bot": false, "first_name": "Owner"},
            "message": {
                "message_id": message.message_id,
                "date": 1_700_000_000,
                "chat": {"id": -100_123, "type": "supergroup", "title": "elsewhere"},
                "text": "Which colour?"
            },
            "chat_instance": "5",
            "data": buttons[0].1,
        }
    });
    stack.telegram.push_raw_update(elsewhere);
    eventually("kernel-tg to take both presses", PROMPT, async || {
        stack.telegram.pending_updates() == 0
    })
    .await;
    let pressed = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, message.message_id, &buttons[1].1);
    message_with(&stack, "Green it is").await;

    let results = tool_results(&last_message(&stack, 1));
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, "green");
    assert!(!results[0].2);
    eventually("the buttons to go", PROMPT, async || {
        stack
            .telegram
            .buttons(OWNER_ID, message.message_id)
            .is_empty()
    })
    .await;
    let answered = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&pressed)?.answer
    })
    .await;
    assert_eq!(answered.as_deref(), Some(zh().question_answered()));
    assert_eq!(stack.telegram.pressed(&stranger).unwrap().answer, None);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_message_answers_the_question_and_a_stale_press_gets_a_toast() {
    let stack = Stack::start().await;
    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Which day?", "options": ["Mon", "Tue"]}"#,
    ));
    stack.llm.push(Script::text("Wednesday then"));
    stack.owner_says("plan a meeting");
    let (message, buttons) = question(&stack, "Which day?").await;
    // Keep the buttons on screen after the answer, as a slow client might.
    stack.telegram.inject(
        "editMessageReplyMarkup",
        tests::fake_telegram::Failure::BadRequest("message can't be edited".into()),
        1,
    );
    let typed = stack.owner_says("Wednesday");
    message_with(&stack, "Wednesday then").await;
    let results = tool_results(&last_message(&stack, 1));
    assert_eq!(results[0].1, "Wednesday");
    // No busy notice for the typed answer.
    let sends = stack.telegram.calls_of("sendMessage");
    assert!(sends.iter().all(|c| reply_target(c) != Some(typed)));

    let stale = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, message.message_id, &buttons[0].1);
    let answered = eventually("the stale press to be answered", PROMPT, async || {
        stack.telegram.pressed(&stale)?.answer
    })
    .await;
    assert_eq!(answered.as_deref(), Some(zh().question_stale()));
    assert_eq!(stack.llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_answers_the_question_with_its_transcript() {
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    speech.set_transcript("周二下午");
    let stack = Stack::start_with("claude", &speech_toml(&speech.base(), SPEECH_KEY, false)).await;
    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Which day?", "options": ["Mon", "Tue"]}"#,
    ));
    stack.llm.push(Script::text("Tuesday afternoon then"));
    stack.owner_says("plan a meeting");
    question(&stack, "Which day?").await;
    stack
        .telegram
        .user_voice(OWNER_ID, b"OggS-spoken-answer".to_vec());
    message_with(&stack, "Tuesday afternoon then").await;
    let results = tool_results(&last_message(&stack, 1));
    assert_eq!(results[0].1, "周二下午");
    assert_eq!(stack.llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_on_openai_keeps_tool_messages_before_the_steer_text() {
    let cli = FakeCli::new(&[WAIT_FOR_GO, &print("built")].concat());
    let stack = Stack::start_with("openai_compat", &cli.toml("claude_code", &[], None)).await;
    stack.llm.push(
        Reply::default()
            .tool(FakeToolCall::new("delegate_to_cli", r#"{"task": "build it"}"#).id("call_slow"))
            .tool(FakeToolCall::new("skill_read", r#"{"name": "daily-brief"}"#).id("call_later")),
    );
    stack.llm.push(Script::text("Done on OpenAI"));
    stack.owner_says("build the project");
    eventually("the slow CLI to run", PROMPT, async || cli.pid()).await;
    assert_eq!(stack.command("/steer 用快速模式").await, zh().steered());
    cli.write_file("go", "");
    // The strict fake accepted the request (else the turn would fail).
    message_with(&stack, "Done on OpenAI").await;
    let requests = stack.llm.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tail: Vec<&str> = messages[messages.len() - 3..]
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(tail, ["tool", "tool", "user"]);
    assert_eq!(messages[messages.len() - 2]["tool_call_id"], "call_later");
    let steer = messages.last().unwrap().to_string();
    assert!(steer.contains("[主人插话] 用快速模式"), "{steer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_times_out_with_no_answer() {
    let stack = Stack::start_edited("claude", "", |toml| {
        toml.replacen("[general]\n", "[general]\nask_timeout_secs = 1\n", 1)
    })
    .await;
    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Anyone there?"}"#,
    ));
    stack.llm.push(Script::text("Nobody answered"));
    stack.owner_says("ask me something");
    let (_, buttons) = question(&stack, "Anyone there?").await;
    assert!(buttons.is_empty());
    message_with(&stack, "Nobody answered").await;
    let results = tool_results(&last_message(&stack, 1));
    assert!(results[0].1.starts_with("no answer"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stop_button_ends_a_stalling_turn_within_a_second() {
    let stack = Stack::start().await;
    stack.llm.push(Script::stall());
    let asked = stack.owner_says("take forever");
    let placeholder = stack.reply_to(asked).await;
    assert_eq!(text_of(&placeholder), zh().placeholder());
    let placeholder_id = placeholder.sent_message_id().unwrap();
    let buttons = stack.telegram.buttons(OWNER_ID, placeholder_id);
    assert_eq!(buttons.len(), 1);
    assert_eq!(buttons[0].0, zh().stop_button());
    stack.llm.wait_requests(1, PROMPT).await;

    let pressed_at = Instant::now();
    let press = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, placeholder_id, &buttons[0].1);
    // agentd answered the Cancel (the turn's token is cancelled) when the toast is asked for.
    let answered = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&press)?.answer
    })
    .await;
    let took = pressed_at.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the Stop button took {took:?}"
    );
    assert_eq!(answered.as_deref(), Some(zh().stop_done()));
    // The turn ended: its placeholder (and so its button) is gone.
    stack
        .telegram
        .wait_for_call(
            "deleteMessage",
            |c| c.int_param("message_id") == Some(placeholder_id),
            PROMPT,
        )
        .await;

    // The transcript stays valid: the next turn's request passes the strict validator.
    stack.llm.push(Script::text("Fine again"));
    stack.owner_says("next one");
    message_with(&stack, "Fine again").await;
    stack.assert_no_secrets();
}
