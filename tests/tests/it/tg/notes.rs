//! Auto memory through both real binaries, with its default provider (`[titles]`): `/new` runs
//! the job, `/notes` shows the day's note rendered like an answer, `/memory` marks the automatic
//! memory and `/status` says what the last run added.

use std::time::Duration;

use tests::fake_llm::{FakeLlm, Script};
use tests::stack::{PROMPT, Stack, text_of};
use tests::wait::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_runs_the_job_and_notes_memory_and_status_show_it() {
    let titles = FakeLlm::start().await;
    let extra = format!(
        "[titles]\ntype = \"claude\"\napi_base = \"{}\"\napi_key = \"sk-titles-key-0123456789\"\n\
         model = \"title-model\"\nmax_tokens = 64\n",
        titles.url()
    );
    let stack = Stack::start_with("claude", &extra).await;
    assert!(
        stack
            .command("/status")
            .await
            .contains("自动记忆：开启，尚未运行")
    );
    titles.push(Script::text("花生过敏"));
    titles.push(Script::text(
        r#"{"topics":[{"text":"饮食禁忌","importance":2}],"facts":[{"text":"主人对花生过敏","importance":5}]}"#,
    ));
    stack
        .llm
        .push(Script::text("记下了，以后推荐菜时会避开花生。"));
    stack.owner_says("我对花生过敏");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c).contains("避开花生"), PROMPT)
        .await;
    titles.wait_requests(1, PROMPT).await;
    stack.command("/new").await;
    let status = eventually(
        "the job's run in /status",
        Duration::from_secs(20),
        async || {
            let status = stack.command("/status").await;
            status.contains("新增 1 条").then_some(status)
        },
    )
    .await;
    assert!(status.contains("自动记忆：上次 "), "{status}");
    assert_eq!(titles.requests().len(), 2);
    assert_eq!(titles.requests()[1].body["model"], "title-model");
    let notes = stack.command("/notes").await;
    assert!(notes.contains("的笔记</b>"), "{notes}");
    for needle in ["<b>事实</b>", "主人对花生过敏", "<b>话题</b>", "饮食禁忌"] {
        assert!(notes.contains(needle), "{needle} in {notes}");
    }
    assert!(!notes.contains("**"), "the Markdown is rendered: {notes}");
    let memory = stack.command("/memory").await;
    assert!(memory.contains("〔自动〕 主人对花生过敏"), "{memory}");
    let old = stack.command("/notes 2001-01-01").await;
    assert!(old.starts_with("2001-01-01 还没有笔记"), "{old}");
    let bad = stack.command("/notes yesterday").await;
    assert!(bad.contains("日期 <code>yesterday</code> 无效"), "{bad}");
    stack.assert_no_secrets();
}
