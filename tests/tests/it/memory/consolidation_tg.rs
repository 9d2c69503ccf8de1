//! Memory consolidation from Telegram through both real binaries (issue 39): a proposed merge
//! of the owner's memory arrives as a message with Merge / Keep buttons (a forged press changes
//! nothing; Merge merges and the buttons go), `/status` says when the job ran and what it
//! changed, `/memory all` lists the set-aside memories marked, and `/memory undo` undoes the
//! newest change first, then says there is nothing left to undo.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use serde_json::json;
use tests::config::memory_provider;
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_telegram::OWNER_ID;
use tests::harness::unix_channel;
use tests::stack::{PROMPT, Stack};
use tests::wait::eventually;

const DEADLINE: Duration = Duration::from_secs(30);

fn extra(mem: &FakeLlm) -> String {
    let memory_auto = "interval = 1\n\n[memory.consolidation]\ninterval_hours = 0";
    memory_provider(&mem.url(), memory_auto)
}

fn facts(facts: &[&str]) -> String {
    let items: Vec<serde_json::Value> = facts
        .iter()
        .map(|f| json!({"text": f, "importance": 4}))
        .collect();
    json!({ "facts": items }).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_is_merged_by_its_button_status_tells_and_memory_undo_undoes() {
    let mem = FakeLlm::start().await;
    let stack = Stack::start_with("claude", &extra(&mem)).await;
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    let owner = pb::AddMemoryRequest {
        text: "主人喜欢乌龙茶".into(),
    };
    client.add_memory(owner).await.unwrap();
    mem.push(Script::text(facts(&[
        "主人每天下午都要喝一杯乌龙",
        "主人的车是白色的",
        "主人新买的车是红色的",
    ])));
    mem.push(Script::text(
        r#"{"supersede": [{"old": 3, "new": 4}],
            "propose": [{"ids": [1, 2], "text": "主人喜欢乌龙茶，每天下午喝一杯"}]}"#,
    ));
    stack.llm.push(Script::text("好的"));
    stack.owner_says("我换了辆红色的车");
    eventually("the proposal's message", DEADLINE, async || {
        stack
            .visible()
            .into_iter()
            .any(|m| m.text.contains("合并成"))
    })
    .await;
    let message = stack
        .visible()
        .into_iter()
        .find(|m| m.text.contains("合并成"))
        .unwrap();
    assert!(
        message.text.contains("主人喜欢乌龙茶") && message.text.contains("每天下午喝一杯"),
        "{}",
        message.text
    );
    let buttons = stack.telegram.buttons(OWNER_ID, message.message_id);
    let labels: Vec<&str> = buttons.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(labels, ["合并", "保留原样"]);

    let status = stack.command("/status").await;
    assert!(
        status.contains("记忆整理：上次") && status.contains("取代 1 条，建议 1 条"),
        "{status}"
    );
    let all = stack.command("/memory all").await;
    assert!(all.contains("〔已被取代〕 主人的车是白色的"), "{all}");
    let plain = stack.command("/memory").await;
    assert!(!plain.contains("白色"), "{plain}");

    // A forged press (a proposal that does not exist) changes nothing.
    stack.telegram.push_raw_update(json!({
        "callback_query": {
            "id": "forged",
            "from": {"id": OWNER_ID, "is_bot": false, "first_name": "Owner"},
            "message": {
                "message_id": message.message_id,
                "date": 1_700_000_000,
                "chat": {"id": OWNER_ID, "type": "private", "first_name": "Owner"},
                "text": "…"
            },
            "chat_instance": "5",
            "data": "mprop:999:m",
        }
    }));
    let answered = stack
        .telegram
        .wait_for_call(
            "answerCallbackQuery",
            |c| c.params["callback_query_id"] == "forged",
            PROMPT,
        )
        .await;
    assert_eq!(answered.params["text"], "这个建议已过期，记忆没有改动");
    assert!(
        stack.command("/memory").await.contains("#3 "),
        "still 3 memories"
    );

    let pressed = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, message.message_id, &buttons[0].1);
    eventually("the merge press answered", PROMPT, async || {
        stack
            .telegram
            .pressed(&pressed)
            .is_some_and(|p| p.answer.is_some())
    })
    .await;
    let toast = stack.telegram.pressed(&pressed).unwrap().answer.unwrap();
    assert_eq!(toast.as_deref(), Some("已合并"));
    eventually("the buttons to go", PROMPT, async || {
        stack
            .telegram
            .buttons(OWNER_ID, message.message_id)
            .is_empty()
    })
    .await;
    let merged = stack.command("/memory").await;
    assert!(
        merged.contains("主人喜欢乌龙茶，每天下午喝一杯"),
        "{merged}"
    );
    assert!(!merged.contains("#3 "), "two memories left: {merged}");

    // Undo: the owner's merge first, then the job's run, then nothing.
    let undone = stack.command("/memory undo").await;
    assert_eq!(undone, "已撤销上次记忆整理，2 条记忆恢复原样");
    let back = stack.command("/memory").await;
    assert!(
        back.contains("主人每天下午都要喝一杯乌龙") && !back.contains("乌龙茶，每天"),
        "{back}"
    );
    assert_eq!(
        stack.command("/memory undo").await,
        "已撤销上次记忆整理，1 条记忆恢复原样"
    );
    assert!(stack.command("/memory").await.contains("主人的车是白色的"));
    assert_eq!(
        stack.command("/memory undo").await,
        "没有可以撤销的记忆整理"
    );
    assert!(stack.command("/status").await.contains("（已撤销）"));
    stack.assert_no_secrets();
}
