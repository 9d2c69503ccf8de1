//! Running a cut-off answer again goes through the budget gate (issue 36): over a `[budget]`
//! limit the rerun button calls no model, its press gets the over-budget toast, and the button
//! stays for later.

use kernel_common::config::Locale;
use tests::fake_llm::{FakeUsage, Reply, Script};
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;
use tests::wait::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_over_the_limit_calls_no_model_and_keeps_its_button() {
    let zh = Told::new(Locale::Zh);
    let mut stack = Stack::start_edited("claude", "", |toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    })
    .await;
    stack
        .llm
        .push(Script::Reply(Reply::text("a dollar answer").usage(
            FakeUsage {
                input: 1_000_000,
                output: 10,
                cache_read: 0,
                cache_write: 0,
            },
        )));
    stack.owner_says("first");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "a dollar answer", PROMPT)
        .await;
    let (slow, _never) = Script::hold("an answer the crash cuts off");
    stack.llm.push(slow);
    stack.owner_says("translate the letter, please");
    stack.llm.wait_requests(2, PROMPT).await;
    stack.kill_agentd();
    // The owner sets a daily budget the day's $1 is already over.
    stack
        .cfg
        .rewrite(|t| format!("{t}\n[budget]\ndaily = 0.5\n"));
    stack.start_agentd();
    let (notice, data) = eventually("the cut-off notice with its button", PROMPT, async || {
        let m = stack
            .visible()
            .into_iter()
            .find(|m| m.text == zh.turn_cut_off())?;
        let (_, data) = stack
            .telegram
            .buttons(OWNER_ID, m.message_id)
            .into_iter()
            .next()?;
        Some((m, data))
    })
    .await;
    let pressed = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, notice.message_id, &data);
    let toast = eventually("the press answered", PROMPT, async || {
        stack.telegram.pressed(&pressed)?.answer
    })
    .await;
    assert_eq!(toast.as_deref(), Some(zh.rerun_over_budget()));
    assert_eq!(
        stack.llm.requests().len(),
        2,
        "no model call over the limit"
    );
    assert_eq!(
        stack.telegram.buttons(OWNER_ID, notice.message_id).len(),
        1,
        "the button stays"
    );
    stack.assert_no_secrets();
}
