//! The Schedules page's background jobs in a real headless Chromium, with the real kernel-agentd
//! and kernel-web against the fake LLM: a background delegation asked for in the chat runs a
//! fake CLI (with a grandchild) that never ends; the page lists it as running with its task as
//! text; its Cancel button (the page's CSRF-protected form) kills the job's whole process tree,
//! agentd's `ListJobs` then calls it cancelled, and the page shows it cancelled without a Cancel
//! button. Screenshots `jobs-running` and `jobs-cancelled` under `target/web-screenshots/`.

use fantoccini::Locator;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use serde_json::json;
use tests::fake_cli::{FakeCli, SLEEP_FOREVER, SPAWN_GRANDCHILD, alive, print, wait_stopped};
use tests::fake_llm::Script;
use tests::wait::eventually;
use tests::web_browser::{WAIT, WebStack, answer_in_state, click, send, text_of, wait_for};
use tonic::transport::Channel;

/// The job's task, with markup that must show as text.
const TASK: &str = "refactor the <b>parser</b>";

#[tokio::test]
async fn a_running_background_job_is_cancelled_from_the_schedules_page() {
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let stack = WebStack::logged_in(&cli.toml("claude_code", &["-p"], None)).await;
    let (llm, browser) = (&stack.llm, &stack.browser);

    // The owner asks in the chat; the model delegates in the background and answers at once.
    llm.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": TASK, "background": true}).to_string(),
    ));
    llm.push(Script::text("已在后台开始重构"));
    send(browser, "在后台重构解析器").await;
    let answer = answer_in_state(browser, "done").await;
    assert!(answer.contains("已在后台开始重构"), "{answer}");
    let (pid, grandchild) = cli.wait_for_pids(WAIT).await;
    assert!(
        alive(pid) && alive(grandchild),
        "the job runs after the turn"
    );

    // agentd records the job beside starting it: the page is loaded once agentd lists it.
    let mut agent = stack.agent().await;
    job_when(&mut agent, "the job listed as running", |s| s == "running").await;

    // The Schedules page lists it as running, its task as text, with Cancel.
    stack.goto("/schedules").await;
    let running = wait_for(
        browser,
        Locator::Css("#jobs tr.job[data-status=\"running\"]"),
        "the running job listed",
    )
    .await;
    let row = running.text().await.unwrap();
    for part in ["#1", "claude_code", TASK, "运行中", "取消"] {
        assert!(row.contains(part), "{part} in {row}");
    }
    let markup = browser.client.find_all(Locator::Css("#jobs b")).await;
    assert!(markup.unwrap().is_empty(), "the task's markup as text");
    browser.screenshot("jobs-running").await;

    // Cancel: the page's form (with its CSRF token) posts; the job's whole tree is killed.
    let token = running
        .find(Locator::Css("form input[name=\"csrf\"]"))
        .await
        .expect("the cancel form carries the CSRF token")
        .attr("value")
        .await
        .unwrap();
    assert!(token.is_some_and(|t| !t.is_empty()));
    click(
        browser,
        "#jobs tr.job[data-status=\"running\"] button.cancel",
    )
    .await;
    for process in [pid, grandchild] {
        assert!(wait_stopped(process, WAIT).await, "{process} survived");
    }

    // agentd calls it cancelled.
    let job = job_when(&mut agent, "the job to end", |s| s != "running").await;
    assert_eq!(job.status, "cancelled", "{job:?}");
    assert_eq!(job.task, TASK);

    // The page shows it cancelled, with nothing left to cancel.
    stack.goto("/schedules").await;
    let jobs = text_of(browser, "#jobs").await;
    assert!(jobs.contains("已取消"), "{jobs}");
    assert!(!jobs.contains("运行中"), "{jobs}");
    let rows = browser
        .client
        .find_all(Locator::Css("#jobs tr.job"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].attr("data-status").await.unwrap().as_deref(),
        Some("cancelled")
    );
    let buttons = browser
        .client
        .find_all(Locator::Css("#jobs button.cancel"))
        .await
        .unwrap();
    assert!(buttons.is_empty(), "no Cancel on an ended job");
    browser.screenshot("jobs-cancelled").await;
    stack.close().await;
}

/// Waits until agentd's `ListJobs` has a job whose status satisfies `status`; that job.
async fn job_when(
    agent: &mut AgentClient<Channel>,
    what: &str,
    status: impl Fn(&str) -> bool,
) -> pb::JobInfo {
    eventually(what, WAIT, async || {
        let jobs = agent
            .list_jobs(pb::ListJobsRequest {})
            .await
            .expect("ListJobs")
            .into_inner()
            .jobs;
        jobs.into_iter().find(|j| status(&j.status))
    })
    .await
}
