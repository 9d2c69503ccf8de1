//! Prices that ship (issue 36): with no `prices` in the config, `/usage` costs a model of the
//! shipped list and says "cost unknown" for a model listed nowhere; the config still wins.

use tests::fake_llm::{FakeUsage, Reply, Script};
use tests::stack::{PROMPT, Stack, text_of};

async fn turn(stack: &Stack, question: &str, answer: &str, usage: FakeUsage) {
    stack
        .llm
        .push(Script::Reply(Reply::text(answer).usage(usage)));
    stack.owner_says(question);
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == answer, PROMPT)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_costs_a_shipped_model_and_says_cost_unknown_for_an_unlisted_one() {
    // fake-model-2 is priced by the config, claude-haiku-4-5 by the shipped list, fake-model
    // nowhere.
    let stack = Stack::start_edited("claude", "", |toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2", "claude-haiku-4-5"]
prices."fake-model-2" = { input = 1000.0, output = 0.0 }"#,
        )
    })
    .await;
    let million = FakeUsage {
        input: 1_000_000,
        output: 1_000_000,
        cache_read: 0,
        cache_write: 0,
    };
    turn(&stack, "first", "unpriced answer", million).await;
    let usage = stack.command("/usage").await;
    assert!(usage.contains("费用未知"), "{usage}");
    assert!(!usage.contains('$'), "no made-up cost: {usage}");

    stack.command("/model claude-haiku-4-5").await;
    turn(&stack, "second", "listed answer", million).await;
    let usage = stack.command("/usage").await;
    // Haiku 4.5's list price: $1 in + $5 out per million.
    assert!(
        usage.contains("$6.0000") && usage.contains("另有 1 次调用费用未知"),
        "{usage}"
    );

    stack.command("/model fake-model-2").await;
    turn(&stack, "third", "configured answer", million).await;
    let usage = stack.command("/usage").await;
    assert!(usage.contains("$1006.0000"), "{usage}");
    stack.assert_no_secrets();
}
