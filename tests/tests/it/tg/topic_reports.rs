//! What Kernel reports on its own goes to the topic it belongs to: a scheduled task set in
//! topic B runs in B's session and its answer arrives in B; a background job started in topic
//! B reports there (its follow-up turn runs in B's session; ending while the main chat runs a
//! turn, its result is stored in B's session; cut off by a crash, the notice arrives in B); a
//! budget warning crossed by topic B's turn arrives in B.

use serde_json::json;
use tests::fake_cli::{FakeCli, SLEEP_FOREVER, WAIT_FOR_GO, print};
use tests::fake_llm::{FakeLlm, FakeUsage, Reply, Script};
use tests::fake_telegram::{Call, FakeTelegram, OWNER_ID};
use tests::stack::{PROMPT, Stack, text_of};
use tests::wait::eventually;

/// The ok sendMessage calls whose text contains `needle`.
fn sent(stack: &Stack, needle: &str) -> Vec<Call> {
    stack
        .telegram
        .calls_of("sendMessage")
        .into_iter()
        .filter(|c| c.ok && text_of(c).contains(needle))
        .collect()
}

/// The stack with topics on (getMe says so at start), `extra` config and `edit`.
async fn topic_stack(extra: &str, edit: impl FnOnce(String) -> String) -> Stack {
    let telegram = FakeTelegram::start(tests::config::TELEGRAM_TOKEN).await;
    telegram.enable_topics();
    Stack::start_against(FakeLlm::start().await, telegram, "claude", extra, edit).await
}

/// The owner asks `text` in topic `thread`; waits for an answer containing `needle` there.
async fn ask_in(stack: &Stack, thread: i64, text: &str, needle: &str) {
    let before = sent(stack, needle).len();
    stack.telegram.user_text_in_topic(OWNER_ID, thread, text);
    eventually("the answer in the topic", PROMPT, async || {
        let found = sent(stack, needle);
        found.len() > before
            && found
                .iter()
                .skip(before)
                .all(|c| c.int_param("message_thread_id") == Some(thread))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_scheduled_in_a_topic_runs_in_its_session_and_answers_there() {
    let stack = topic_stack("", |toml| toml).await;
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    stack.llm.push(Script::text("alpha noted"));
    ask_in(&stack, a, "alpha talk about apples", "alpha noted").await;
    stack.llm.push(Script::tool_call(
        "schedule_add",
        json!({"when": "PT2S", "message": "check the beta servers", "mode": "task"}).to_string(),
    ));
    stack.llm.push(Script::text("task scheduled"));
    ask_in(
        &stack,
        b,
        "beta talk about bananas; check servers soon",
        "task scheduled",
    )
    .await;

    stack.llm.push(Script::text("beta servers are fine"));
    eventually("the task's answer", PROMPT, async || {
        !sent(&stack, "beta servers are fine").is_empty()
    })
    .await;
    let answers = sent(&stack, "beta servers are fine");
    assert_eq!(answers.len(), 1, "{}", stack.telegram.call_log());
    assert_eq!(answers[0].int_param("message_thread_id"), Some(b));
    // It ran in topic B's session: its request has B's conversation, not A's.
    let task = stack
        .llm
        .requests()
        .into_iter()
        .find(|r| r.raw_body.contains("check the beta servers") && r.raw_body.contains("[定时任务"))
        .expect("the task's model request");
    assert!(task.raw_body.contains("bananas"), "{}", task.raw_body);
    assert!(!task.raw_body.contains("apples"));
}

/// Opens topic "Beta" and starts a background job of `cli` from it; returns once the CLI runs
/// (the topic's thread id).
async fn start_job_in_topic(stack: &Stack, cli: &FakeCli) -> i64 {
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    stack.llm.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": "refactor the beta parser", "background": true}).to_string(),
    ));
    stack.llm.push(Script::text("started in the background"));
    ask_in(
        stack,
        b,
        "refactor the parser in the background",
        "started in the background",
    )
    .await;
    eventually("the job's CLI to start", PROMPT, async || cli.pid()).await;
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_started_in_a_topic_reports_there() {
    let cli = FakeCli::new(&format!("{WAIT_FOR_GO}{}", print("JOB-RESULT-beta")));
    let stack = topic_stack(&cli.toml("claude_code", &["-p"], None), |toml| toml).await;
    let b = start_job_in_topic(&stack, &cli).await;

    // The job ends with no turn running: its follow-up turn answers in topic B.
    stack.llm.push(Script::text("the beta job is done"));
    cli.write_file("go", "");
    eventually("the job's report", PROMPT, async || {
        !sent(&stack, "the beta job is done").is_empty()
    })
    .await;
    let reports = sent(&stack, "the beta job is done");
    assert_eq!(reports.len(), 1, "{}", stack.telegram.call_log());
    assert_eq!(reports[0].int_param("message_thread_id"), Some(b));
    let follow_up = stack.llm.last_request().unwrap().raw_body;
    assert!(follow_up.contains("JOB-RESULT-beta"), "{follow_up}");
    assert!(
        follow_up.contains("refactor the parser in the background"),
        "B's session"
    );
}

/// One turn in topic `thread` costing $1.
async fn dollar_turn_in(stack: &Stack, thread: i64, question: &str, answer: &str) {
    stack
        .llm
        .push(Script::Reply(Reply::text(answer).usage(FakeUsage {
            input: 1_000_000,
            output: 10,
            cache_read: 0,
            cache_write: 0,
        })));
    ask_in(stack, thread, question, answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_warning_crossed_by_a_topics_turn_arrives_in_that_topic() {
    // fake-model costs $1 per million input tokens; the day's limit is $2.40 (warned from $1.92).
    let stack = topic_stack("[budget]\ndaily = 2.4\n", |toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    })
    .await;
    let a = stack.telegram.user_opens_topic(OWNER_ID, "Alpha");
    let b = stack.telegram.user_opens_topic(OWNER_ID, "Beta");
    dollar_turn_in(&stack, a, "first question", "first answer").await;
    assert!(sent(&stack, "💰").is_empty());
    dollar_turn_in(&stack, b, "second question", "second answer").await;
    eventually("the warning at 80 %", PROMPT, async || {
        !sent(&stack, "💰").is_empty()
    })
    .await;
    let warnings = sent(&stack, "💰");
    assert_eq!(warnings.len(), 1, "{}", stack.telegram.call_log());
    assert_eq!(warnings[0].int_param("message_thread_id"), Some(b));
    assert!(
        text_of(&warnings[0]).contains("今日预算"),
        "{}",
        text_of(&warnings[0])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_ending_while_the_main_chat_runs_a_turn_is_stored_in_its_topics_session() {
    let cli = FakeCli::new(&format!("{WAIT_FOR_GO}{}", print("JOB-RESULT-beta")));
    let stack = topic_stack(&cli.toml("claude_code", &["-p"], None), |toml| toml).await;
    let b = start_job_in_topic(&stack, &cli).await;

    // A turn runs in the main chat (held mid-answer) when the job ends.
    let (held, release) = Script::hold("a long main chat story");
    stack.llm.push(held);
    stack.owner_says("main chat: tell me a story");
    stack.llm.wait_requests(3, PROMPT).await;
    cli.write_file("go", "");
    eventually("the job's raw status", PROMPT, async || {
        !sent(&stack, "JOB-RESULT-beta").is_empty()
    })
    .await;
    let raw = sent(&stack, "JOB-RESULT-beta");
    assert_eq!(raw.len(), 1, "{}", stack.telegram.call_log());
    assert_eq!(raw[0].int_param("message_thread_id"), Some(b));
    release.release();
    eventually("the main chat's answer", PROMPT, async || {
        !sent(&stack, "a long main chat story").is_empty()
    })
    .await;

    // The result is in topic B's session, not in the main chat's.
    stack
        .llm
        .push(Script::text("beta: the job changed the parser"));
    ask_in(&stack, b, "how did the job go?", "beta: the job changed").await;
    let in_b = stack.llm.last_request().unwrap().raw_body;
    assert!(in_b.contains("JOB-RESULT-beta"), "{in_b}");
    stack.llm.push(Script::text("main: another story"));
    stack.owner_says("main chat: another one");
    eventually("the main chat's second answer", PROMPT, async || {
        !sent(&stack, "main: another story").is_empty()
    })
    .await;
    let in_main = stack.llm.last_request().unwrap().raw_body;
    assert!(in_main.contains("main chat: tell me a story"), "{in_main}");
    assert!(!in_main.contains("JOB-RESULT-beta"), "{in_main}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_cut_off_by_a_crash_is_reported_in_its_topic_after_the_restart() {
    let cli = FakeCli::new(&format!("{}{SLEEP_FOREVER}", print("working")));
    let mut stack = topic_stack(&cli.toml("claude_code", &["-p"], None), |toml| toml).await;
    let b = start_job_in_topic(&stack, &cli).await;

    stack.kill_agentd();
    stack.start_agentd();
    eventually("the interruption notice", PROMPT, async || {
        !sent(&stack, "中断").is_empty()
    })
    .await;
    let told = sent(&stack, "中断");
    assert_eq!(told.len(), 1, "{}", stack.telegram.call_log());
    assert!(
        text_of(&told[0]).contains("后台任务 #"),
        "{}",
        text_of(&told[0])
    );
    assert_eq!(told[0].int_param("message_thread_id"), Some(b));
}
