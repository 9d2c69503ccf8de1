//! Talking to a running turn from inside a topic, through the real binaries: `/steer`, `/next`,
//! `/status`, the Stop button, an `ask_user` answer and an approval press sent in a topic act on
//! that topic's session and turn, and everything they start answers in that topic; `/status` in
//! the main chat lists every running turn with its session; `/resume #n` in a topic binds that
//! session to the topic, and `/history` shows it living there under the topic's latest name.

use kernel_common::config::Locale;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::fake_cli::{FakeCli, print};
use tests::fake_llm::{Release, Script};
use tests::fake_telegram::{OWNER_ID, SentMessage};
use tests::harness::unix_channel;
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The session agentd bound topic `thread` to.
async fn session_of(stack: &Stack, thread: i64) -> i64 {
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    let reply = client
        .topic_session(pb::TopicSessionRequest {
            thread_id: thread,
            name: None,
        })
        .await
        .unwrap()
        .into_inner();
    reply.session.unwrap().id
}

/// Sends `text` in topic `thread` and waits for the bot's reply to it; the reply must be in
/// that topic.
async fn command_in(stack: &Stack, thread: i64, text: &str) -> String {
    let id = stack.telegram.user_text_in_topic(OWNER_ID, thread, text);
    let reply = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(id),
            PROMPT,
        )
        .await;
    assert_eq!(
        reply.int_param("message_thread_id"),
        Some(thread),
        "{text}: {}",
        stack.telegram.call_log()
    );
    text_of(&reply)
}

/// Waits for the bot's message whose text contains `needle`.
async fn message_with(stack: &Stack, needle: &str) -> SentMessage {
    eventually(&format!("a message with {needle:?}"), PROMPT, async || {
        stack
            .telegram
            .messages(OWNER_ID)
            .into_iter()
            .find(|m| !m.deleted && m.text.contains(needle))
    })
    .await
}

/// No message of the bot outside topic `thread` contains `needle`.
fn only_in(stack: &Stack, thread: i64, needle: &str) {
    let stray: Vec<_> = stack
        .telegram
        .messages(OWNER_ID)
        .into_iter()
        .filter(|m| m.text.contains(needle) && m.thread_id != Some(thread))
        .collect();
    assert!(stray.is_empty(), "{stray:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_next_and_status_in_a_topic_act_on_that_topics_turn() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    let (held, release) = Script::hold("alpha first answer");
    stack.llm.push(held);
    stack.llm.push(Script::text("alpha steered answer"));
    stack.llm.push(Script::text("alpha queued answer"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha long question");
    stack.llm.wait_requests(1, PROMPT).await;
    let session_a = session_of(&stack, a).await;

    // /steer in topic A reaches A's running turn (not the idle main lane).
    assert_eq!(
        command_in(&stack, a, "/steer also mention pears").await,
        zh().steered()
    );
    // /next in topic A queues after A's turn.
    assert_eq!(
        command_in(&stack, a, "/next then list plums").await,
        zh().queued_next(1)
    );
    // /status in topic A shows A's turn; in topic B, B's (none); in the main chat every
    // running turn with its session.
    let status_a = command_in(&stack, a, "/status").await;
    assert!(status_a.contains(zh().status_running()), "{status_a}");
    let status_b = command_in(&stack, b, "/status").await;
    assert!(status_b.contains(zh().status_idle()), "{status_b}");
    let status = stack.command("/status").await;
    assert!(status.contains(zh().running_turns()), "{status}");
    assert!(
        status.contains(&zh().running_turn_of(session_a)),
        "{status}"
    );
    assert_eq!(stack.llm.requests().len(), 1, "nothing started elsewhere");

    release.release();
    // A's turn takes the steer as a step of its own, then the queued message runs as A's next
    // turn; everything answers in topic A.
    let steered = message_with(&stack, "alpha steered answer").await;
    assert_eq!(steered.thread_id, Some(a));
    let queued = message_with(&stack, "alpha queued answer").await;
    assert_eq!(queued.thread_id, Some(a));
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].raw_body.contains("also mention pears"));
    assert!(requests[2].raw_body.contains("then list plums"));
    // The queued turn ran in A's session: it saw A's conversation.
    assert!(requests[2].raw_body.contains("alpha long question"));
    for needle in ["alpha steered", "alpha queued"] {
        only_in(&stack, a, needle);
    }
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steer_in_an_idle_topic_starts_that_topics_turn_there() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    stack.llm.push(Script::text("answer to the steer"));
    // The new turn's placeholder replies to the /steer message too; the command's reply says
    // it started a turn, in the topic.
    let id = stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "/steer start something");
    let reply = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(id) && text_of(c) == zh().steer_started(),
            PROMPT,
        )
        .await;
    assert_eq!(reply.int_param("message_thread_id"), Some(a));
    let answer = message_with(&stack, "answer to the steer").await;
    assert_eq!(answer.thread_id, Some(a));
    // It ran in the topic's session, not the main chat's current one.
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let session_a = session_of(&stack, a).await;
    assert_ne!(status.current_session.map(|s| s.id), Some(session_a));
}

/// Topics "Alpha" and "Beta", each running a turn: A's model call stalls, B's answer ("beta
/// answer arrives anyway") waits for the returned release. Returns A, B and A's message id.
async fn alpha_stalls_beta_holds(stack: &Stack) -> (i64, i64, i64, Release) {
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    stack.llm.push(Script::stall());
    let asked = stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha takes forever");
    stack.llm.wait_requests(1, PROMPT).await;
    let (beta, release_beta) = Script::hold("beta answer arrives anyway");
    stack.llm.push(beta);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta question");
    stack.llm.wait_requests(2, PROMPT).await;
    (a, b, asked, release_beta)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stop_button_in_a_topic_ends_that_turn_while_the_other_topic_answers() {
    let stack = Stack::start().await;
    let (a, b, asked, release_beta) = alpha_stalls_beta_holds(&stack).await;

    let placeholder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c) == zh().placeholder(),
            PROMPT,
        )
        .await;
    assert_eq!(placeholder.int_param("message_thread_id"), Some(a));
    let placeholder_id = placeholder.sent_message_id().unwrap();
    let buttons = stack.telegram.buttons(OWNER_ID, placeholder_id);
    assert_eq!(buttons.len(), 1, "{}", stack.telegram.call_log());
    let press = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, placeholder_id, &buttons[0].1);
    let answered = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&press)?.answer
    })
    .await;
    assert_eq!(answered.as_deref(), Some(zh().stop_done()));
    // B's turn still runs, and answers in B.
    let status = stack.command("/status").await;
    assert!(status.contains(zh().running_turns()), "{status}");
    let session_b = session_of(&stack, b).await;
    assert!(
        status.contains(&zh().running_turn_of(session_b)),
        "{status}"
    );
    release_beta.release();
    let answer = message_with(&stack, "beta answer arrives anyway").await;
    assert_eq!(answer.thread_id, Some(b));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_and_an_approval_in_a_topic_are_asked_and_answered_there() {
    let cli = FakeCli::new(&print("cli ran"));
    let extra = format!(
        "{}\n[approvals]\nmode = \"always\"\n",
        cli.toml("claude_code", &[], None)
    );
    let stack = Stack::start_with("claude", &extra).await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    // B's turn runs the whole time, so a tap or a typed answer could go astray.
    let (beta, release_beta) = Script::hold("beta is done");
    stack.llm.push(beta);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta keeps running");
    stack.llm.wait_requests(1, PROMPT).await;

    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Which colour?", "options": ["red", "green"]}"#,
    ));
    stack.llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Which size?", "options": ["small", "large"]}"#,
    ));
    stack.llm.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "paint it", "cwd": null}"#,
    ));
    stack.llm.push(Script::text("alpha painted it"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "paint the wall");

    // The question is asked in topic A; its button answers it.
    let question = message_with(&stack, "Which colour?").await;
    assert_eq!(question.thread_id, Some(a));
    let buttons = stack.telegram.buttons(OWNER_ID, question.message_id);
    let pressed = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, question.message_id, &buttons[1].1);
    let answered = eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&pressed)?.answer
    })
    .await;
    assert_eq!(answered.as_deref(), Some(zh().question_answered()));

    // The second question is answered by a message typed in topic A (not a new turn of A,
    // and not B's).
    let question = message_with(&stack, "Which size?").await;
    assert_eq!(question.thread_id, Some(a));
    let typed = stack.telegram.user_text_in_topic(OWNER_ID, a, "large");

    // The approval is asked in topic A; allowing it runs the CLI.
    let asked = message_with(&stack, "需要你批准").await;
    assert_eq!(asked.thread_id, Some(a));
    let buttons = stack.telegram.buttons(OWNER_ID, asked.message_id);
    stack
        .telegram
        .press(OWNER_ID, OWNER_ID, asked.message_id, &buttons[0].1);
    let answer = message_with(&stack, "alpha painted it").await;
    assert_eq!(answer.thread_id, Some(a));
    assert!(cli.pid().is_some(), "an allowed CLI runs");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 5, "one request per step, nothing more");
    assert!(requests[2].raw_body.contains("green"));
    assert!(requests[3].raw_body.contains("large"));
    assert!(requests[4].raw_body.contains("cli ran"));
    // The typed answer was taken as the answer: nothing replied to it as a new message.
    let sends = stack.telegram.calls_of("sendMessage");
    assert!(sends.iter().all(|c| reply_target(c) != Some(typed)));

    release_beta.release();
    let beta = message_with(&stack, "beta is done").await;
    assert_eq!(beta.thread_id, Some(b));
    // B's request never carried A's answers.
    assert!(!stack.llm.requests()[0].raw_body.contains("green"));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_inside_a_topic_binds_that_session_to_the_topic() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    stack.llm.push(Script::text("main answer about apples"));
    stack.owner_says("remember the apples in the main chat");
    message_with(&stack, "main answer about apples").await;
    let history = stack.command("/history").await;
    assert!(history.contains("#1 "), "{history}");
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let main_session = status.current_session.unwrap().id;

    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let reply = command_in(&stack, a, "/resume #1").await;
    assert!(reply.starts_with(zh().resumed_in_topic()), "{reply}");
    assert_eq!(session_of(&stack, a).await, main_session);
    // The topic's earlier session had no messages: it is gone, not left in `/history`.
    let history = stack.command("/history").await;
    assert!(
        history.contains("#1 ") && !history.contains("#2 "),
        "{history}"
    );

    // A message in the topic now continues that session, and is answered in the topic.
    stack.llm.push(Script::text("topic answer with the apples"));
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "what did I say?");
    let answer = message_with(&stack, "topic answer with the apples").await;
    assert_eq!(answer.thread_id, Some(a));
    let requests = stack.llm.requests();
    assert!(
        requests[1]
            .raw_body
            .contains("remember the apples in the main chat"),
        "{}",
        requests[1].raw_body
    );

    // `/history` marks the session with its topic's name, the latest one after a rename.
    let history = stack.command("/history").await;
    let line = history
        .lines()
        .find(|l| l.contains("#1 "))
        .unwrap_or_default();
    assert!(line.contains(" · 话题「Alpha」"), "{history}");
    stack.telegram.user_topic_service(
        OWNER_ID,
        a,
        "forum_topic_edited",
        serde_json::json!({"name": "Alpha & co"}),
    );
    let renamed = eventually("/history to show the new name", PROMPT, async || {
        let history = stack.command("/history").await;
        history
            .contains("话题「Alpha &amp; co」")
            .then_some(history)
    })
    .await;
    // Only the session living in the topic is marked.
    assert_eq!(renamed.matches(" · 话题").count(), 1, "{renamed}");
    stack.assert_no_secrets();
}

/// The Stop button on the placeholder answering `asked`, made as an older kernel-tg made it
/// (no turn id: `stop`); returns the placeholder's message id.
async fn aged_stop(stack: &Stack, asked: i64) -> i64 {
    let placeholder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c) == zh().placeholder(),
            PROMPT,
        )
        .await;
    let id = placeholder.sent_message_id().unwrap();
    let buttons = stack.telegram.buttons(OWNER_ID, id);
    assert_eq!(buttons.len(), 1, "{}", stack.telegram.call_log());
    stack
        .telegram
        .age_button(OWNER_ID, id, &buttons[0].1, "stop");
    id
}

/// Presses the aged Stop button on message `id`; waits for its toast.
async fn press_stop(stack: &Stack, id: i64) -> Option<String> {
    let press = stack.telegram.press(OWNER_ID, OWNER_ID, id, "stop");
    eventually("the press to be answered", PROMPT, async || {
        stack.telegram.pressed(&press)?.answer
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_button_without_its_turn_id_stops_only_the_turn_where_it_was_pressed() {
    let stack = Stack::start().await;
    let (_, b, in_a, release_beta) = alpha_stalls_beta_holds(&stack).await;
    stack.llm.push(Script::stall());
    let in_main = stack.owner_says("main chat takes forever too");
    stack.llm.wait_requests(3, PROMPT).await;

    // Pressed in topic A: A's turn only. Pressed in the main chat: the main chat's turn only.
    let stop_a = aged_stop(&stack, in_a).await;
    assert_eq!(
        press_stop(&stack, stop_a).await.as_deref(),
        Some(zh().stop_done())
    );
    let stop_main = aged_stop(&stack, in_main).await;
    assert_eq!(
        press_stop(&stack, stop_main).await.as_deref(),
        Some(zh().stop_done())
    );
    let session_b = session_of(&stack, b).await;
    let status = stack.command("/status").await;
    assert!(
        status.contains(&zh().running_turn_of(session_b)),
        "{status}"
    );
    release_beta.release();
    let answer = message_with(&stack, "beta answer arrives anyway").await;
    assert_eq!(answer.thread_id, Some(b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_waiting_for_a_busy_topic_does_not_hold_back_another_topics() {
    let stack = Stack::start().await;
    stack.telegram.enable_topics();
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    let (alpha, release_alpha) = Script::hold("alpha first answer");
    stack.llm.push(alpha);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, a, "alpha takes long");
    stack.llm.wait_requests(1, PROMPT).await;
    let (beta, release_beta) = Script::hold("beta first answer");
    stack.llm.push(beta);
    stack
        .telegram
        .user_text_in_topic(OWNER_ID, b, "beta takes a moment");
    stack.llm.wait_requests(2, PROMPT).await;

    // Queued first in A (busy for long), then in B: each is first in its own topic's queue.
    assert_eq!(
        command_in(&stack, a, "/next then list plums").await,
        zh().queued_next(1)
    );
    assert_eq!(
        command_in(&stack, b, "/next then list pears").await,
        zh().queued_next(1)
    );
    // B's turn ends: B's queued message runs at once, while A's turn still runs.
    stack.llm.push(Script::text("beta queued answer"));
    release_beta.release();
    let queued = message_with(&stack, "beta queued answer").await;
    assert_eq!(queued.thread_id, Some(b));
    assert!(
        stack
            .telegram
            .messages(OWNER_ID)
            .iter()
            .all(|m| !m.text.contains("alpha first answer")),
        "A's turn still runs"
    );
    stack.llm.push(Script::text("alpha queued answer"));
    release_alpha.release();
    let queued = message_with(&stack, "alpha queued answer").await;
    assert_eq!(queued.thread_id, Some(a));
    let requests = stack.llm.requests();
    assert!(requests[2].raw_body.contains("then list pears"));
    assert!(requests[3].raw_body.contains("then list plums"));
}
