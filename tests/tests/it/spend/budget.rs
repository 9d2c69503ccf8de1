//! Budgets (issue 36) through both real binaries: a daily budget the fake model's usage crosses
//! on the third turn warns once at 80 %, refuses the fourth message with the spend and the
//! Continue buttons and calls no model — also after agentd restarts (the ledger is the truth);
//! a script's `Chat` gets the typed refusal; a stale or forged override (`GrantBudgetOverride`)
//! changes nothing; "Continue today" runs the refused message, once (a repeated or forged press
//! runs nothing); a refused photo runs with its image after Continue. Over the limit, titles,
//! auto memory and a scheduled task call no model (the owner is told the task was skipped).

use kernel_common::config::Locale;
use tests::fake_llm::{FakeLlm, FakeToolCall, FakeUsage, Reply, Script};
use tests::fake_telegram::{OWNER_ID, SentMessage};
use tests::media::{PNG, base64, downloads};
use tests::process::grpcurl;
use tests::stack::{PROMPT, Stack, outbox_drained, rpc, text_of};
use tests::told::Told;
use tests::wait::eventually;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// fake-model costs $1 per million input tokens; the day's limit is $2.40 (warned from $1.92).
async fn budget_stack() -> Stack {
    stack_with_daily("2.4").await
}

/// [`budget_stack`] with a daily limit of `daily` dollars.
async fn stack_with_daily(daily: &str) -> Stack {
    Stack::start_edited("claude", &format!("[budget]\ndaily = {daily}\n"), |toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    })
    .await
}

/// One owner turn costing $1.
async fn dollar_turn(stack: &Stack, question: &str, answer: &str) {
    stack
        .llm
        .push(Script::Reply(Reply::text(answer).usage(FakeUsage {
            input: 1_000_000,
            output: 10,
            cache_read: 0,
            cache_write: 0,
        })));
    stack.owner_says(question);
    stack
        .telegram
        .wait_for_call("sendMessage", |c| c.ok && text_of(c) == answer, PROMPT)
        .await;
}

/// Presses the button `data` under message `id`; the toast it got.
async fn press(stack: &Stack, id: i64, data: &str) -> Option<String> {
    let pressed = stack.telegram.press(OWNER_ID, OWNER_ID, id, data);
    eventually("the press answered", PROMPT, async || {
        stack.telegram.pressed(&pressed)?.answer
    })
    .await
}

/// Waits for the (first) limit notice with its two Continue buttons.
async fn limit_notice(stack: &Stack) -> (SentMessage, Vec<(String, String)>) {
    eventually("the limit notice with its buttons", PROMPT, async || {
        let m = stack
            .visible()
            .into_iter()
            .find(|m| m.text.starts_with("⛔"))?;
        let buttons = stack.telegram.buttons(OWNER_ID, m.message_id);
        (buttons.len() == 2).then_some((m, buttons))
    })
    .await
}

fn warnings(stack: &Stack) -> usize {
    stack
        .visible()
        .iter()
        .filter(|m| m.text.starts_with("💰"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daily_budget_warns_once_stops_the_fourth_message_and_continue_today_lifts_it() {
    let mut stack = budget_stack().await;
    dollar_turn(&stack, "first question", "first answer").await;
    assert_eq!(warnings(&stack), 0);
    dollar_turn(&stack, "second question", "second answer").await;
    eventually("the warning at 80 %", PROMPT, async || {
        (warnings(&stack) == 1).then_some(())
    })
    .await;
    let warning = stack
        .visible()
        .into_iter()
        .find(|m| m.text.starts_with("💰"))
        .unwrap();
    assert!(
        warning.text.contains("今日预算") && warning.text.contains("$2.00"),
        "{}",
        warning.text
    );
    dollar_turn(&stack, "third question", "third answer").await;

    // Over the limit: a restart changes nothing (the spend is summed from the ledger).
    stack.stop_agentd();
    stack.start_agentd();
    let calls = stack.llm.requests().len();
    stack.owner_says("fourth question");
    let (message, buttons) = limit_notice(&stack).await;
    assert!(
        message.text.contains("$3.00") && message.text.contains("$2.40"),
        "{}",
        message.text
    );
    assert_eq!(buttons[0].0, zh().budget_continue_today());
    assert_eq!(buttons[1].0, zh().budget_continue_month());
    assert!(buttons[0].1.starts_with("bud:day:"), "{:?}", buttons);
    assert!(buttons[1].1.starts_with("bud:month:"), "{:?}", buttons);
    assert_eq!(
        stack.llm.requests().len(),
        calls,
        "no model call over the limit"
    );
    assert_eq!(warnings(&stack), 1, "warned once, restart included");

    // A stale or forged period (what a press of an old button sends) changes nothing.
    for period in ["day:1999-01-01", "month:1999-01", "forged", ""] {
        let reply = rpc(
            &stack,
            "GrantBudgetOverride",
            serde_json::json!({ "period": period }),
        );
        assert!(reply.get("granted").is_none(), "{period}: {reply}");
    }
    // A client without delivery gets the same refusal, typed (FAILED_PRECONDITION).
    let socket = stack.cfg.socket().display().to_string();
    let out = grpcurl(&[
        "-plaintext",
        "-unix",
        "-authority",
        "localhost",
        "-d",
        r#"{"text": "a script's question"}"#,
        &socket,
        "kernel.v1.Agent/Chat",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("FailedPrecondition") && stderr.contains("$3.00 spent of $2.40"),
        "{stderr}"
    );
    stack.owner_says("still over?");
    eventually("a second limit notice", PROMPT, async || {
        let n = stack
            .visible()
            .iter()
            .filter(|m| m.text.starts_with("⛔"))
            .count();
        (n == 2).then_some(())
    })
    .await;
    assert_eq!(stack.llm.requests().len(), calls);

    // Continue today: the limit is lifted, the buttons go, and the refused message runs, once.
    stack
        .llm
        .push(Script::Reply(Reply::text("fourth answer").usage(
            FakeUsage {
                input: 1_000_000,
                output: 10,
                cache_read: 0,
                cache_write: 0,
            },
        )));
    let toast = press(&stack, message.message_id, &buttons[0].1).await;
    assert_eq!(toast.as_deref(), Some(zh().budget_granted_running()));
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "fourth answer",
            PROMPT,
        )
        .await;
    assert_eq!(stack.llm.requests().len(), calls + 1);
    let asked = stack.llm.last_request().unwrap().raw_body;
    assert!(asked.contains("fourth question"), "{asked}");
    eventually("the buttons to go", PROMPT, async || {
        stack
            .telegram
            .buttons(OWNER_ID, message.message_id)
            .is_empty()
            .then_some(())
    })
    .await;
    // The same press again (its message ran), or one naming a message never refused or a
    // forged id: nothing is granted and nothing runs.
    let (period, refusal) = buttons[0].1["bud:".len()..].rsplit_once(':').unwrap();
    for id in [refusal, "999", "1; drop", &"9".repeat(40)] {
        let reply = rpc(
            &stack,
            "GrantBudgetOverride",
            serde_json::json!({ "period": period, "refusal": id }),
        );
        assert!(
            reply.get("granted").is_none() && reply.get("runs").is_none(),
            "{id}: {reply}"
        );
    }
    outbox_drained(&stack).await;
    assert_eq!(stack.llm.requests().len(), calls + 1, "run once");

    // Where the money goes: /usage and GetStatus carry the budget, the override and the models.
    let usage = stack.command("/usage").await;
    for needle in [
        "今日：已用 $4.00 / $2.40，剩余 $0.00",
        "已选择“今天继续”",
        "fake/fake-model：4 次，$4.0000",
    ] {
        assert!(usage.contains(needle), "{needle} in {usage}");
    }
    let status = rpc(&stack, "GetStatus", serde_json::json!({}));
    assert_eq!(status["budgets"][0]["period"], "daily", "{status}");
    assert_eq!(status["budgets"][0]["limitUsd"], 2.4, "{status}");
    assert_eq!(status["spentTodayUsd"], 4.0, "{status}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_refused_over_the_limit_runs_with_its_image_after_continue() {
    let stack = stack_with_daily("0.5").await;
    dollar_turn(&stack, "first question", "first answer").await;
    let calls = stack.llm.requests().len();
    stack
        .telegram
        .user_photo(OWNER_ID, PNG.to_vec(), Some("what does the receipt say?"));
    let (message, buttons) = limit_notice(&stack).await;
    assert_eq!(stack.llm.requests().len(), calls, "no model call");
    assert!(downloads(&stack.cfg).is_empty(), "nothing ran yet");
    stack.llm.push(Script::text("it says 42 yuan"));
    let toast = press(&stack, message.message_id, &buttons[0].1).await;
    assert_eq!(toast.as_deref(), Some(zh().budget_granted_running()));
    stack.answer_sent("it says 42 yuan").await;
    let user = stack.user_message_of(calls);
    assert!(user.contains(&base64(PNG)), "the image: {user}");
    assert!(user.contains("what does the receipt say?"), "{user}");
    assert!(!user.contains("[图片已处理]"), "{user}");
    assert_eq!(downloads(&stack.cfg).len(), 1, "kept when it ran");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_limit_titles_auto_memory_and_scheduled_tasks_call_no_model() {
    let titles = FakeLlm::start().await;
    let extra = format!(
        "[titles]\ntype = \"claude\"\napi_base = \"{}\"\napi_key = \"sk-titles-key-0123456789\"\n\
         model = \"title-model\"\nmax_tokens = 64\n\n[budget]\ndaily = 0.5\n",
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
    // The first turn runs (nothing spent yet) and crosses the $0.50 limit.
    dollar_turn(&stack, "plan my week", "here is your week").await;
    eventually("titling paused", PROMPT, async || {
        stack
            .logs()
            .contains("over a budget limit: no titling call")
            .then_some(())
    })
    .await;
    stack.command("/new").await;
    eventually("auto memory paused", PROMPT, async || {
        stack
            .logs()
            .contains("auto memory: over a budget limit; no model call")
            .then_some(())
    })
    .await;
    rpc(
        &stack,
        "AddSchedule",
        serde_json::json!({"when": "PT1S", "message": "weekly report", "mode": "task"}),
    );
    let skipped = eventually("the owner told of the skipped task", PROMPT, async || {
        stack
            .visible()
            .into_iter()
            .find(|m| m.text.starts_with("⏸"))
    })
    .await;
    assert!(skipped.text.contains("定时任务未运行"), "{}", skipped.text);
    assert_eq!(
        stack.llm.requests().len(),
        1,
        "only the first turn called the model"
    );
    assert!(
        titles.requests().is_empty(),
        "no titles or auto memory call"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_turn_finishes_its_step_and_stops_before_the_next_model_call() {
    let stack = budget_stack().await;
    // The first step (a tool call) costs $3: over the $2.40 limit once it is recorded.
    stack.llm.push(Script::Reply(
        Reply::text("")
            .tool(FakeToolCall::new("memory_search", r#"{"query":"trip"}"#))
            .usage(FakeUsage {
                input: 3_000_000,
                output: 10,
                cache_read: 0,
                cache_write: 0,
            }),
    ));
    stack.llm.push(Script::text("never asked for"));
    stack.owner_says("find my trip notes");
    let notice = eventually(
        "the limit notice in place of the answer",
        PROMPT,
        async || {
            stack
                .visible()
                .into_iter()
                .find(|m| m.text.starts_with("⛔"))
        },
    )
    .await;
    assert!(notice.text.contains("$3.00"), "{}", notice.text);
    assert_eq!(
        stack.llm.requests().len(),
        1,
        "no model call after the step"
    );
    stack.assert_no_secrets();
}
