//! Where the money goes (issue 36): every model call lands in the usage ledger with what it was
//! for — the owner's turn, a title, auto memory, a scheduled task — so each counts toward the
//! budgets; `GetUsage`, `GetStatus` and `/usage` split today and this month by provider, model
//! and purpose. (The fail-over purpose is asserted in `provider::failover`.)

use tests::fake_llm::{FakeLlm, FakeUsage, Reply, Script};
use tests::stack::{PROMPT, Stack, rpc, text_of};
use tests::wait::eventually;

/// The purposes of today's ledger rows, as `(purpose, provider/model, calls)`.
fn purposes(reply: &serde_json::Value, list: &str) -> Vec<(String, String, u64)> {
    reply[list]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["purpose"].as_str().unwrap_or_default().to_owned(),
                format!(
                    "{}/{}",
                    l["provider"].as_str().unwrap_or_default(),
                    l["model"].as_str().unwrap_or_default()
                ),
                l["calls"]
                    .as_str()
                    .and_then(|c| c.parse().ok())
                    .or_else(|| l["calls"].as_u64())
                    .unwrap_or(0),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn titles_auto_memory_and_tasks_are_in_the_ledger_split_by_purpose() {
    let titles = FakeLlm::start().await;
    let extra = format!(
        "[titles]\ntype = \"claude\"\napi_base = \"{}\"\napi_key = \"sk-titles-key-0123456789\"\n\
         model = \"title-model\"\nmax_tokens = 64\n",
        titles.url()
    );
    let stack = Stack::start_edited("claude", &extra, |toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    })
    .await;
    let usage = FakeUsage {
        input: 1_000,
        output: 10,
        cache_read: 0,
        cache_write: 0,
    };
    titles.push(Script::Reply(Reply::text("周计划").usage(usage)));
    stack
        .llm
        .push(Script::Reply(Reply::text("here is your week").usage(usage)));
    stack.owner_says("plan my week");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "here is your week", PROMPT)
        .await;
    // The session's title, then (on /new) auto memory: both on the [titles] endpoint.
    eventually("the title call in the ledger", PROMPT, async || {
        let reply = rpc(&stack, "GetUsage", serde_json::json!({}));
        purposes(&reply, "todayByPurpose")
            .iter()
            .any(|(p, _, _)| p == "title")
            .then_some(())
    })
    .await;
    titles.push(Script::Reply(
        Reply::text(r#"{"note": "", "memories": []}"#).usage(usage),
    ));
    stack.command("/new").await;
    eventually("the auto memory call in the ledger", PROMPT, async || {
        let reply = rpc(&stack, "GetUsage", serde_json::json!({}));
        purposes(&reply, "todayByPurpose")
            .iter()
            .any(|(p, _, _)| p == "memory")
            .then_some(())
    })
    .await;
    // A scheduled task's turn.
    stack
        .llm
        .push(Script::Reply(Reply::text("the weekly report").usage(usage)));
    rpc(
        &stack,
        "AddSchedule",
        serde_json::json!({"when": "PT1S", "message": "weekly report", "mode": "task"}),
    );
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "the weekly report", PROMPT)
        .await;
    let reply = eventually("the task call in the ledger", PROMPT, async || {
        let reply = rpc(&stack, "GetUsage", serde_json::json!({}));
        purposes(&reply, "todayByPurpose")
            .iter()
            .any(|(p, _, _)| p == "task")
            .then_some(reply)
    })
    .await;
    let today = purposes(&reply, "todayByPurpose");
    // The task's turn (in the session /new began) gets its own title, and auto memory may run
    // again after it: those two count at least once.
    for (purpose, model, exactly_one) in [
        ("owner", "fake/fake-model", true),
        ("task", "fake/fake-model", true),
        ("memory", "titles/title-model", false),
        ("title", "titles/title-model", false),
    ] {
        let calls = today
            .iter()
            .find(|(p, m, _)| p == purpose && m == model)
            .map_or(0, |l| l.2);
        assert!(
            calls == 1 || (!exactly_one && calls > 1),
            "{purpose} {model} in {today:?}"
        );
    }
    assert_eq!(purposes(&reply, "monthByPurpose"), today);
    let status = rpc(&stack, "GetStatus", serde_json::json!({}));
    assert_eq!(purposes(&status, "todayByPurpose"), today);

    let shown = stack.command("/usage").await;
    for needle in [
        "今日按用途",
        "对话 · fake/fake-model：1 次，$0.0010",
        "定时任务 · fake/fake-model：1 次，$0.0010",
        "标题 · titles/title-model：",
        "自动记忆 · titles/title-model：",
    ] {
        assert!(shown.contains(needle), "{needle} in {shown}");
    }
    stack.assert_no_secrets();
}
