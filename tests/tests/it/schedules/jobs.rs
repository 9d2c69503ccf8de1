//! Background delegations through the real binaries: `delegate_to_cli` with `background = true`
//! returns at once, the owner chats while the job runs, the result arrives once (a follow-up
//! turn's summary) and the next turn's request carries it; killing agentd mid-job tells the
//! owner after the restart and leaves no process of the job running; `/jobs` lists jobs and
//! `/jobs cancel #n` kills one.

use std::time::{Duration, Instant};

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_cli::{
    FakeCli, SLEEP_FOREVER, SPAWN_GRANDCHILD, WAIT_FOR_GO, alive, print, wait_stopped,
};
use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, outbox_drained, reply_target, sent_containing, text_of};
use tests::told::Told;
use tests::wait::eventually;

/// What the fake CLI prints when it is done.
const RESULT: &str = "JOB-RESULT-7f3a: 3 files changed";
/// The model's background delegation.
fn delegate(task: &str) -> String {
    json!({"task": task, "background": true}).to_string()
}

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// The owner says `text`; waits for the bot's message replying to it that contains `needle`.
async fn ask(stack: &Stack, text: &str, needle: &str) {
    let id = stack.owner_says(text);
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(id) && text_of(c).contains(needle),
            PROMPT,
        )
        .await;
}

/// The owner asks for a background job; returns once its CLI runs (its pid).
async fn start_job(stack: &Stack, cli: &FakeCli) -> i32 {
    stack.llm.push(Script::tool_call(
        "delegate_to_cli",
        delegate("refactor the parser"),
    ));
    stack.llm.push(Script::text("已在后台开始重构"));
    let asked = Instant::now();
    ask(stack, "在后台重构解析器", "已在后台开始").await;
    // The tool returned at once with a job id (the CLI is still running).
    let tool_result = &stack.llm.requests()[1].raw_body;
    assert!(
        tool_result.contains(r#"\"background\":true"#) && tool_result.contains("job_id"),
        "{tool_result}"
    );
    let pid = eventually("the job's CLI to start", PROMPT, async || cli.pid()).await;
    assert!(alive(pid), "the job's CLI runs after the turn ended");
    assert!(asked.elapsed() < PROMPT);
    pid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_reports_once_and_the_next_turn_carries_its_result() {
    // The CLI takes ~5 s: it sleeps, then waits for the owner's chat to be over (the `go` file).
    let cli = FakeCli::new(&format!("sleep 5\n{WAIT_FOR_GO}{}", print(RESULT)));
    let stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    let started = Instant::now();
    let pid = start_job(&stack, &cli).await;

    // The owner chats meanwhile, answered at once.
    stack.llm.push(Script::text("你好，我在"));
    ask(&stack, "你好", "你好，我在").await;
    assert!(alive(pid), "the job ran while the owner chatted");
    assert_eq!(sent_containing(&stack, "忙"), 0, "no busy refusal");

    // The job ends: a follow-up turn summarises it, once.
    stack
        .llm
        .push(Script::text("后台任务已完成：改了 3 个文件"));
    cli.write_file("go", "");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("后台任务已完成"),
            PROMPT,
        )
        .await;
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert!(wait_stopped(pid, PROMPT).await);
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 4, "two turns and the follow-up");
    let follow_up = &requests[3].raw_body;
    assert!(
        follow_up.contains(RESULT) && follow_up.contains("后台任务 #"),
        "{follow_up}"
    );

    // The next turn's request carries the result.
    stack.llm.push(Script::text("刚才改了 3 个文件"));
    ask(&stack, "刚才的结果？", "刚才改了").await;
    let next = stack.llm.last_request().unwrap().raw_body;
    assert!(next.contains(RESULT), "{next}");
    outbox_drained(&stack).await;
    assert_eq!(sent_containing(&stack, "后台任务已完成"), 1);

    let listed = stack.command("/jobs").await;
    assert!(
        listed.contains("#1 已完成（退出码 0） ") && listed.contains("refactor the parser"),
        "{listed}"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_ending_during_a_turn_sends_its_raw_status_and_the_next_turn_carries_it() {
    let cli = FakeCli::new(&format!("{WAIT_FOR_GO}{}", print(RESULT)));
    let stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    let pid = start_job(&stack, &cli).await;

    // The owner's turn is running (held mid-answer) when the job ends.
    let (held, release) = Script::hold("讲一个很长的故事");
    stack.llm.push(held);
    let asked = stack.owner_says("讲个故事");
    eventually("the owner's turn to reach the model", PROMPT, async || {
        stack.llm.requests().len() == 3
    })
    .await;
    cli.write_file("go", "");
    assert!(wait_stopped(pid, PROMPT).await);
    let raw = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("后台任务 #1"),
            PROMPT,
        )
        .await;
    let raw = text_of(&raw);
    assert!(
        raw.contains("已完成") && raw.contains("退出码 0") && raw.contains(RESULT),
        "{raw}"
    );
    release.release();
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c).contains("很长的故事"),
            PROMPT,
        )
        .await;

    // No summary turn; the next turn's request carries the result.
    stack.llm.push(Script::text("任务改了 3 个文件"));
    ask(&stack, "后台任务怎么样了？", "任务改了").await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 4, "no follow-up turn");
    assert!(
        requests[3].raw_body.contains(RESULT),
        "{}",
        requests[3].raw_body
    );
    outbox_drained(&stack).await;
    assert_eq!(sent_containing(&stack, "后台任务 #1"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_agentd_mid_job_tells_the_owner_and_leaves_no_process() {
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let mut stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    start_job(&stack, &cli).await;
    let (pid, grandchild) = cli.wait_for_pids(PROMPT).await;

    stack.kill_agentd();
    stack.start_agentd();
    let told = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("中断"),
            PROMPT,
        )
        .await;
    assert!(text_of(&told).contains("后台任务 #"), "{}", text_of(&told));
    for process in [pid, grandchild] {
        assert!(
            wait_stopped(process, PROMPT).await,
            "{process} of the killed job still runs"
        );
    }
    outbox_drained(&stack).await;
    assert_eq!(sent_containing(&stack, "中断"), 1);
    let listed = stack.command("/jobs").await;
    assert!(listed.contains("#1 已中断 "), "{listed}");
    // Only the turn that started the job asked the model.
    assert_eq!(stack.llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_agentd_mid_job_ends_its_processes_and_tells_the_owner_once() {
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let mut stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    start_job(&stack, &cli).await;
    let (pid, grandchild) = cli.wait_for_pids(PROMPT).await;

    // A graceful stop kills the job's whole tree before agentd exits.
    let status = tokio::task::block_in_place(|| stack.stop_agentd());
    assert!(status.success(), "{status:?}");
    assert!(
        !alive(pid) && !alive(grandchild),
        "the job's processes outlived agentd"
    );
    stack.start_agentd();
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("中断"),
            PROMPT,
        )
        .await;
    outbox_drained(&stack).await;
    assert_eq!(sent_containing(&stack, "中断"), 1);
    assert!(stack.command("/jobs").await.contains("#1 已中断 "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_lists_running_and_recent_jobs_and_cancel_kills_one() {
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let stack = Stack::start_with("claude", &cli.toml("claude_code", &["-p"], None)).await;
    assert_eq!(stack.command("/jobs").await, zh().no_jobs());
    start_job(&stack, &cli).await;
    let (pid, grandchild) = cli.wait_for_pids(PROMPT).await;

    let listed = stack.command("/jobs").await;
    assert!(
        listed.contains("#1 运行中 ")
            && listed.contains("<code>claude_code</code> refactor the parser")
            && listed.contains("/jobs cancel #n"),
        "{listed}"
    );
    // /cancel stops the owner's turn, never a background job.
    stack.command("/cancel").await;
    assert!(alive(pid) && alive(grandchild), "/cancel killed the job");
    assert_eq!(
        stack.command("/jobs cancel #1").await,
        zh().job_cancelled(true)
    );
    for process in [pid, grandchild] {
        assert!(wait_stopped(process, PROMPT).await, "{process} survived");
    }
    eventually("the job to show as cancelled", PROMPT, async || {
        stack
            .command("/jobs")
            .await
            .contains("#1 已取消 ")
            .then_some(())
    })
    .await;
    assert_eq!(
        stack.command("/jobs cancel #1").await,
        zh().job_cancelled(false)
    );
    assert!(stack.command("/jobs cancel #2").await.contains("#2"));
    // A cancelled job is not summarised: only the turn that started it asked the model.
    assert_eq!(stack.llm.requests().len(), 2);
    stack.assert_no_secrets();
}
