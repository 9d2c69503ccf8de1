//! Processes that leave the delegated CLI's process group and session (`setsid`) and ignore
//! TERM do not survive the delegation: not `/cancel`, not the time limit, not the CLI exiting by
//! itself, not agentd's shutdown (real binaries; agentd is their child subreaper and tracks them
//! through `/proc`).

use std::time::Duration;

use kernel_proto::v1::agent_client::AgentClient;
use tests::chat::{send, until};
use tests::config::TestConfig;
use tests::fake_cli::{
    FakeCli, IGNORE_TERM, SLEEP_FOREVER, SPAWN_SETSID_CHILD, alive, print, process_state,
    wait_stopped,
};
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::unix_channel;
use tests::process::AgentdProcess;
use tests::stack::{PROMPT, Stack};

/// Long enough for agentd's 3 s TERM→KILL grace and the reaping after it.
const DEADLINE: Duration = Duration::from_secs(20);

/// A stack whose default CLI is `cli` (with a time limit), and a turn that delegates to it.
async fn delegating(cli: &FakeCli, timeout_secs: Option<u64>) -> Stack {
    let stack = Stack::start_with("claude", &cli.toml("claude_code", &[], timeout_secs)).await;
    stack.llm.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "run the tests"}"#,
    ));
    stack.llm.push(Script::text("done"));
    stack.owner_says("请跑一下测试");
    stack
}

/// Waits until the fake has started its escaped process; its pid.
async fn escaped(cli: &FakeCli) -> i32 {
    let until = std::time::Instant::now() + PROMPT;
    loop {
        if let Some(pid) = cli.escaped_pid() {
            return pid;
        }
        assert!(std::time::Instant::now() < until, "the CLI never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn assert_all_gone(cli: &FakeCli, pid: i32) {
    assert!(
        wait_stopped(pid, DEADLINE).await,
        "the setsid child {pid} survived: state {:?}",
        process_state(pid)
    );
    let until = std::time::Instant::now() + DEADLINE;
    while !cli.escaped_processes().is_empty() {
        assert!(
            std::time::Instant::now() < until,
            "still running: {:?}",
            cli.escaped_processes()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if let Some(cli_pid) = cli.pid() {
        assert!(wait_stopped(cli_pid, DEADLINE).await, "the CLI survived");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_a_setsid_child_that_ignores_term() {
    let cli = FakeCli::new(&format!(
        "{IGNORE_TERM}{SPAWN_SETSID_CHILD}{}{SLEEP_FOREVER}",
        print("started")
    ));
    let stack = delegating(&cli, None).await;
    let pid = escaped(&cli).await;
    assert!(alive(pid));
    assert_eq!(cli.escaped_processes(), [pid], "the marker finds it");
    stack.command("/cancel").await;
    assert_all_gone(&cli, pid).await;
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_kills_a_setsid_child_that_ignores_term() {
    let cli = FakeCli::new(&format!(
        "{IGNORE_TERM}{SPAWN_SETSID_CHILD}{}{SLEEP_FOREVER}",
        print("started")
    ));
    let stack = delegating(&cli, Some(1)).await;
    let pid = escaped(&cli).await;
    stack.turn_done().await;
    assert_all_gone(&cli, pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setsid_child_left_behind_by_a_cli_that_exited_is_killed() {
    // The CLI exits after its tool has been seen; the orphan is re-parented to agentd.
    let cli = FakeCli::new(&format!(
        "{SPAWN_SETSID_CHILD}sleep 1\n{}",
        print("finished")
    ));
    let stack = delegating(&cli, None).await;
    let pid = escaped(&cli).await;
    stack.turn_done().await;
    assert_all_gone(&cli, pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_agentd_down_kills_a_setsid_child_that_ignores_term() {
    let cli = FakeCli::new(&format!(
        "{IGNORE_TERM}{SPAWN_SETSID_CHILD}{}{SLEEP_FOREVER}",
        print("started")
    ));
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), &cli.toml("claude_code", &[], None));
    let path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&path, &[]))
        .await
        .unwrap();
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    fake.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "run the tests"}"#,
    ));
    let mut stream = send(&mut client, "请跑一下测试").await;
    until(&mut stream, |e| {
        matches!(e, kernel_proto::v1::chat_event::Event::CliStarted(_))
    })
    .await;
    let pid = escaped(&cli).await;
    let status = tokio::task::spawn_blocking(move || agentd.terminate())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_all_gone(&cli, pid).await;
}
