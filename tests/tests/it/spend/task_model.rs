//! The cheap model where it suffices (issue 36): a scheduled task names the provider/model it
//! runs on (`AddSchedule.model`, the `schedule_add` tool's `model`), checked against the
//! configured providers — an unknown provider or model, or a model for a reminder, is refused
//! with the choices — `/tasks` shows it, and the task's turn calls that model (the fake sees it).

use tests::process::grpcurl;
use tests::stack::{PROMPT, Stack, rpc, text_of};

/// `AddSchedule` with `request`, expected refused: grpcurl's stderr.
fn refused(stack: &Stack, request: serde_json::Value) -> String {
    let socket = stack.cfg.socket().display().to_string();
    let out = grpcurl(&[
        "-plaintext",
        "-unix",
        "-authority",
        "localhost",
        "-d",
        &request.to_string(),
        &socket,
        "kernel.v1.Agent/AddSchedule",
    ]);
    assert!(!out.status.success(), "{request} was accepted");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_scheduled_with_a_model_runs_on_that_model() {
    let stack = Stack::start().await;
    for (request, needle) in [
        (
            serde_json::json!({"when": "PT1H", "message": "m", "mode": "task", "model": "nope/x"}),
            "with one of fake",
        ),
        (
            serde_json::json!({"when": "PT1H", "message": "m", "mode": "task", "model": "fake/gpt-9"}),
            "not configured for provider fake: use one of fake-model, fake-model-2",
        ),
        (
            serde_json::json!({"when": "PT1H", "message": "m", "model": "fake/fake-model-2"}),
            "a reminder calls no model",
        ),
    ] {
        let stderr = refused(&stack, request);
        assert!(
            stderr.contains("InvalidArgument") && stderr.contains(needle),
            "{needle} in {stderr}"
        );
    }
    // A recurring task stays listed: /tasks shows its model.
    let added = rpc(
        &stack,
        "AddSchedule",
        serde_json::json!({"when": "0 8 * * *", "message": "daily digest", "mode": "task",
                           "model": " fake/fake-model-2 "}),
    );
    assert_eq!(added["schedule"]["model"], "fake/fake-model-2", "{added}");
    let tasks = stack.command("/tasks").await;
    assert!(
        tasks.contains("任务 [fake/fake-model-2] daily digest"),
        "{tasks}"
    );
    // A provider alone means its default model; the task's turn calls the model it names.
    let calls = stack.llm.requests().len();
    stack
        .llm
        .push(tests::fake_llm::Script::text("the cheap report"));
    rpc(
        &stack,
        "AddSchedule",
        serde_json::json!({"when": "PT1S", "message": "weekly report", "mode": "task",
                           "model": "fake/fake-model-2"}),
    );
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "the cheap report", PROMPT)
        .await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), calls + 1);
    assert_eq!(requests[calls].body["model"], "fake-model-2");
    // The owner's own turns stay on the current model.
    stack
        .llm
        .push(tests::fake_llm::Script::text("owner answer"));
    stack.owner_says("hello");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "owner answer", PROMPT)
        .await;
    assert_eq!(
        stack.llm.last_request().unwrap().body["model"],
        "fake-model"
    );
    stack.assert_no_secrets();
}
