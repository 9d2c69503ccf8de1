//! Reminders and scheduled tasks through the real binaries: a reminder arrives once, on time,
//! with no model call; a task runs a turn whose answer arrives once; reminders survive a
//! kernel-tg or agentd outage; a task whose turn an agentd crash cut off runs after the restart;
//! a scheduled turn never interrupts the owner's, and the owner's message during a scheduled turn
//! is answered after it without a busy refusal.

use std::time::{Duration, Instant};

use chrono::Utc;
use kernel_agentd::store::Store;
use kernel_agentd::store::schedules::NewSchedule;
use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, outbox_drained, reply_target, rpc, sent_containing, text_of};
use tests::told::Told;
use tests::wait::eventually;

/// The stack, once the owner has opened the chat (a bot cannot write first).
async fn started() -> Stack {
    let stack = Stack::start().await;
    assert_eq!(stack.command("/tasks").await, zh().no_schedules());
    stack
}

fn zh() -> Told {
    Told::new(Locale::Zh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_arrives_once_on_time_without_a_model_call() {
    let stack = started().await;
    let asked = Instant::now();
    let added = rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT3S", "message": "交房租 **today**"}),
    );
    assert_eq!(added["schedule"]["mode"], "remind", "{added}");
    assert!(added["schedule"]["nextFire"].is_string(), "{added}");

    let reminder = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("交房租"),
            PROMPT,
        )
        .await;
    let took = asked.elapsed();
    assert!(
        (Duration::from_secs(2)..=Duration::from_secs(4)).contains(&took),
        "the reminder came after {took:?}"
    );
    // Rendered like an answer (Markdown → HTML), replying to nothing.
    assert_eq!(text_of(&reminder), "交房租 <b>today</b>");
    assert_eq!(reply_target(&reminder), None);
    outbox_drained(&stack).await;
    // The one-shot is gone and nothing else was said; no model was asked.
    assert_eq!(stack.command("/tasks").await, zh().no_schedules());
    assert_eq!(sent_containing(&stack, "交房租"), 1);
    assert!(stack.llm.requests().is_empty());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_a_turn_whose_answer_arrives_once() {
    let stack = started().await;
    stack.llm.push(Script::text("今天晴，最高 20 度"));
    rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT1S", "message": "今天天气如何", "mode": "task"}),
    );
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("今天晴"),
            PROMPT,
        )
        .await;
    outbox_drained(&stack).await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].raw_body.clone();
    assert!(
        prompt.contains("今天天气如何") && prompt.contains("定时任务"),
        "{prompt}"
    );
    assert_eq!(sent_containing(&stack, "今天晴"), 1);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_schedules_with_the_tool_and_the_owner_lists_and_deletes() {
    let stack = started().await;
    stack.llm.push(Script::tool_call(
        "schedule_add",
        json!({"when": "0 8 * * 1-5", "message": "给我今天的天气和日程", "mode": "task"})
            .to_string(),
    ));
    stack.llm.push(Script::text("好的，每个工作日 8 点"));
    let asked = stack.owner_says("每个工作日 8:00 给我今天的天气和日程");
    let answer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("每个工作日 8 点"),
            PROMPT,
        )
        .await;
    assert_eq!(reply_target(&answer), Some(asked));
    // The tool result told the model the next fire time, in local time.
    let second = &stack.llm.requests()[1];
    assert!(
        second.raw_body.contains("next_fire") && second.raw_body.contains("08:00"),
        "{}",
        second.raw_body
    );

    let listed = stack.command("/tasks").await;
    assert!(listed.contains("#1 下次 "), "{listed}");
    assert!(
        listed.contains("08:00 (<code>0 8 * * 1-5</code>) 任务 给我今天的天气和日程"),
        "{listed}"
    );
    assert_eq!(
        stack.command("/tasks del #1").await,
        zh().schedules_deleted(1)
    );
    assert_eq!(stack.command("/tasks").await, zh().no_schedules());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_due_while_kernel_tg_is_down_arrives_after_it_restarts() {
    let mut stack = started().await;
    stack.kill_bot();
    rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT1S", "message": "吃药"}),
    );
    eventually("the reminder to be queued", PROMPT, async || {
        rpc(&stack, "GetStatus", json!({})).get("undelivered") == Some(&json!("1"))
    })
    .await;
    assert_eq!(sent_containing(&stack, "吃药"), 0);
    stack.start_bot().await;
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("吃药"),
            PROMPT,
        )
        .await;
    outbox_drained(&stack).await;
    assert_eq!(sent_containing(&stack, "吃药"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_due_while_agentd_is_down_fire_once_at_start() {
    let mut stack = started().await;
    stack.kill_agentd();
    // Due while agentd was down: a one-shot ten minutes ago, and a daily one last due three
    // days ago (three missed runs).
    let store = Store::open(&stack.cfg.data_dir().join("kernel.db"))
        .await
        .unwrap();
    let now = Utc::now();
    for (spec, expr, message, ago) in [
        ("at", "", "交水费", chrono::TimeDelta::minutes(10)),
        ("cron", "0 9 * * *", "每日站会", chrono::TimeDelta::days(3)),
    ] {
        let due = now - ago;
        store
            .add_schedule(&NewSchedule {
                spec: spec.into(),
                expr: if spec == "at" {
                    due.to_rfc3339()
                } else {
                    expr.into()
                },
                mode: "remind".into(),
                message: message.into(),
                next_fire: due,
                model: None,
            })
            .await
            .unwrap();
    }
    store.close().await;
    stack.start_agentd();

    let late = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("交水费"),
            PROMPT,
        )
        .await;
    // The original time is noted.
    assert!(text_of(&late).contains("原定"), "{}", text_of(&late));
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("每日站会"),
            PROMPT,
        )
        .await;
    outbox_drained(&stack).await;
    // Each fired once; the recurring one keeps its schedule, the one-shot is gone.
    assert_eq!(sent_containing(&stack, "交水费"), 1);
    assert_eq!(sent_containing(&stack, "每日站会"), 1);
    let listed = stack.command("/tasks").await;
    assert!(listed.contains("#1 下次 "), "{listed}");
    assert!(
        listed.contains("09:00 (<code>0 9 * * *</code>) 提醒 每日站会"),
        "{listed}"
    );
    assert!(!listed.contains("交水费"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_turn_a_crash_cut_off_runs_after_the_restart() {
    let mut stack = started().await;
    let (held, _release) = Script::hold("servers: first try");
    stack.llm.push(held);
    rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT1S", "message": "check the servers", "mode": "task"}),
    );
    stack.llm.wait_requests(1, PROMPT).await;
    stack.kill_agentd();
    stack.llm.push(Script::text("servers: all up"));
    stack.start_agentd();
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("servers: all up"),
            PROMPT,
        )
        .await;
    outbox_drained(&stack).await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].raw_body.contains("check the servers"),
        "{}",
        requests[1].raw_body
    );
    assert_eq!(sent_containing(&stack, "servers: all up"), 1);
    assert_eq!(sent_containing(&stack, "first try"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_turn_waits_for_the_owners_turn_then_runs() {
    let stack = started().await;
    let (owner_reply, release) = Script::hold("owner answer");
    stack.llm.push(owner_reply);
    stack.llm.push(Script::text("scheduled answer"));
    let asked = stack.owner_says("long question");
    stack.llm.wait_requests(1, PROMPT).await;
    rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT1S", "message": "run the report", "mode": "task"}),
    );
    // Once fired (the one-shot is gone), the task waits for the gate: no second request.
    eventually("the schedule to fire", PROMPT, async || {
        rpc(&stack, "ListSchedules", json!({}))
            .get("schedules")
            .is_none()
    })
    .await;
    assert_eq!(stack.llm.requests().len(), 1);
    release.release();
    let answer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("owner answer"),
            PROMPT,
        )
        .await;
    assert_eq!(reply_target(&answer), Some(asked));
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("scheduled answer"),
            PROMPT,
        )
        .await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].raw_body.contains("run the report"));
    assert_eq!(sent_containing(&stack, "scheduled answer"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owners_message_during_a_scheduled_turn_is_answered_after_it() {
    let stack = started().await;
    let (scheduled, release) = Script::hold("scheduled answer");
    stack.llm.push(scheduled);
    stack.llm.push(Script::text("owner answer"));
    rpc(
        &stack,
        "AddSchedule",
        json!({"when": "PT1S", "message": "run the report", "mode": "task"}),
    );
    stack.llm.wait_requests(1, PROMPT).await;
    let asked = stack.owner_says("hello?");
    // kernel-tg took it; it confirms the update only once agentd starts its turn (after the
    // scheduled one), so the update stays with Telegram meanwhile.
    stack.telegram.wait_delivered(asked, PROMPT).await;
    release.release();
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("scheduled answer"),
            PROMPT,
        )
        .await;
    let answer = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c).contains("owner answer"),
            PROMPT,
        )
        .await;
    assert_eq!(reply_target(&answer), Some(asked));
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].raw_body.contains("hello?"));
    assert_eq!(
        sent_containing(&stack, zh().busy()),
        0,
        "{}",
        stack.telegram.call_log()
    );
    stack.assert_no_secrets();
}
