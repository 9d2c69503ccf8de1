//! Prices that ship (issue 36): with no `prices` in the config, `/usage` costs a model of the
//! shipped list and says "cost unknown" for a model listed nowhere; the config still wins.
//! `telegram.show_cost` adds a cost footer to each answer; without it the answer is unchanged.

use tests::fake_llm::{FakeUsage, Reply, Script};
use tests::stack::{PROMPT, Stack, text_of};
use tests::wait::eventually;

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

/// `/usage` once it counts `calls` calls today: a turn's usage is stored when the turn ends,
/// just after its answer is sent.
async fn usage_counting(stack: &Stack, calls: usize) -> String {
    let counted = format!("调用 {calls} 次");
    eventually("the call counted", PROMPT, async || {
        let usage = stack.command("/usage").await;
        usage.contains(&counted).then_some(usage)
    })
    .await
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
    let usage = usage_counting(&stack, 1).await;
    assert!(usage.contains("费用未知"), "{usage}");
    assert!(!usage.contains('$'), "no made-up cost: {usage}");

    stack.command("/model claude-haiku-4-5").await;
    turn(&stack, "second", "listed answer", million).await;
    let usage = usage_counting(&stack, 2).await;
    // Haiku 4.5's list price: $1 in + $5 out per million.
    assert!(
        usage.contains("$6.0000") && usage.contains("另有 1 次调用费用未知"),
        "{usage}"
    );

    stack.command("/model fake-model-2").await;
    turn(&stack, "third", "configured answer", million).await;
    // The turn's usage is stored when the turn ends, just after its answer is sent.
    let usage = usage_counting(&stack, 3).await;
    assert!(usage.contains("$1006.0000"), "{usage}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_cost_adds_a_footer_and_without_it_the_answer_is_unchanged() {
    let priced = |toml: String| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    };
    let million = FakeUsage {
        input: 1_000_000,
        output: 0,
        cache_read: 0,
        cache_write: 0,
    };
    let plain = Stack::start_edited("claude", "", priced).await;
    turn(&plain, "question", "the plain answer", million).await;
    assert_eq!(plain.only_answer().await, "the plain answer");

    let footed = Stack::start_edited("claude", "", |toml| {
        priced(toml).replace("[telegram]\n", "[telegram]\nshow_cost = true\n")
    })
    .await;
    footed
        .llm
        .push(Script::Reply(Reply::text("the answer").usage(million)));
    footed.owner_says("question");
    let answer = footed
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).starts_with("the answer"),
            PROMPT,
        )
        .await;
    let text = text_of(&answer);
    assert!(text.contains("💰 本次 1000000 tokens，$1.0000"), "{text}");
    footed.assert_no_secrets();
}
