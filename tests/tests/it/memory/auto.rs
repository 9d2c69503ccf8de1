//! Auto memory end to end (in-process agentd, the fake LLM for chat and a second one for the
//! job): the job runs after `interval` user messages without holding up the next turn, on
//! `/new`, de-duplicates what it extracts (also against recalled memories), writes the day's
//! note, leaves everything unchanged on malformed output, a 500 or a stall, and makes no model
//! call at all when disabled.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::chat::{completed, turn};
use tests::config::{MEMORY_MODEL, TestConfig, memory_provider};
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, LogCapture, Reply, Script};
use tests::harness::Harness;
use tests::wait::eventually;
use tonic::transport::Channel;

const DEADLINE: Duration = Duration::from_secs(20);

/// A config whose chat provider is `main` and whose `[memory_auto]` (with `settings`) calls
/// `mem` through `[providers.mem]`.
fn config(main: &FakeLlm, mem: &FakeLlm, settings: &str) -> TestConfig {
    TestConfig::new(&main.url(), &memory_provider(&mem.url(), settings))
}

/// The JSON answer of an extraction with these facts (importance 4) and one topic.
fn facts(facts: &[&str]) -> String {
    let items: Vec<serde_json::Value> = facts
        .iter()
        .map(|f| serde_json::json!({"text": f, "importance": 4}))
        .collect();
    serde_json::json!({"topics": [{"text": "闲聊", "importance": 1}], "facts": items}).to_string()
}

async fn status(c: &mut AgentClient<Channel>) -> pb::MemoryAutoStatus {
    let s = c.get_status(pb::GetStatusRequest {}).await.unwrap();
    s.into_inner()
        .memory_auto
        .expect("memory_auto in GetStatus")
}

async fn memories(c: &mut AgentClient<Channel>) -> Vec<pb::MemoryInfo> {
    let req = pb::ListMemoriesRequest {};
    c.list_memories(req).await.unwrap().into_inner().memories
}

async fn note(c: &mut AgentClient<Channel>, date: &str) -> pb::GetNotesResponse {
    let req = pb::GetNotesRequest { date: date.into() };
    c.get_notes(req).await.unwrap().into_inner()
}

/// The text of the job's `i`-th request (its one user message).
fn prompt(mem: &FakeLlm, i: usize) -> String {
    let req = &mem.requests()[i];
    assert_eq!(req.body["model"], MEMORY_MODEL);
    assert!(!req.is_stream(), "the extraction is a non-streaming call");
    req.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits until the last run reported `outcome` with `added` and `refreshed`.
async fn wait_run(c: &mut AgentClient<Channel>, outcome: &str, added: u32, refreshed: u32) {
    let what = format!("a run ending {outcome} with {added} added and {refreshed} refreshed");
    eventually(what, DEADLINE, async || {
        let s = status(c).await;
        s.last_run.is_some() && s.outcome == outcome && s.added == added && s.refreshed == refreshed
    })
    .await;
}

#[tokio::test]
async fn after_ten_user_messages_the_job_runs_while_the_eleventh_turn_is_answered() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem, "")).await;
    let (held, release) = Script::hold("");
    let Script::Reply(reply) = held else {
        unreachable!()
    };
    mem.push(Reply {
        text: facts(&["主人对花生过敏"]),
        ..reply
    });
    assert!(status(&mut h.client).await.enabled);
    for i in 1..=9 {
        completed(&turn(&mut h.client, &format!("第 {i} 条消息")).await);
        assert!(mem.requests().is_empty(), "no run before 10 user messages");
    }
    completed(&turn(&mut h.client, "第 10 条消息：我对花生过敏").await);
    mem.wait_requests(1, DEADLINE).await;
    let eleventh = turn(&mut h.client, "第 11 条消息").await;
    completed(&eleventh);
    assert!(
        mem.served()[0].finished.is_none(),
        "the 11th turn was answered while the job's call was still running"
    );
    assert_eq!(status(&mut h.client).await.last_run, None);
    release.release();
    wait_run(&mut h.client, "ok", 1, 0).await;
    let text = prompt(&mem, 0);
    assert!(
        text.contains("第 1 条消息") && text.contains("我对花生过敏"),
        "{text}"
    );
    assert!(!text.contains("第 11 条消息"), "{text}");
    let list = memories(&mut h.client).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].text, "主人对花生过敏");
    assert!(list[0].auto, "auto memories are marked");
    let today = note(&mut h.client, "").await;
    let text = today.text.expect("today's note");
    assert!(
        text.contains("主人对花生过敏") && text.contains("闲聊"),
        "{text}"
    );
    assert_eq!(note(&mut h.client, &today.date).await.text, Some(text));
    assert_eq!(note(&mut h.client, "2001-01-01").await.text, None);
    let bad = h
        .client
        .get_notes(pb::GetNotesRequest {
            date: "yesterday".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        mem.requests().len(),
        1,
        "one user message is not another run"
    );
}

#[tokio::test]
async fn facts_planted_in_three_conversations_are_remembered_once() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem, "")).await;
    let conversations = [
        ("我的猫叫米索", facts(&["主人的猫叫米索"]), (1, 0)),
        ("米索今天又挑食了", facts(&["主人的猫叫米索。"]), (0, 1)),
        (
            "我下周带米索去杭州",
            facts(&["主人的猫名叫米索", "主人下周去杭州"]),
            (1, 1),
        ),
    ];
    for (i, (said, answer, (added, refreshed))) in conversations.into_iter().enumerate() {
        mem.push(Script::text(answer));
        completed(&turn(&mut h.client, said).await);
        completed(&turn(&mut h.client, "谢谢").await);
        h.client
            .new_session(pb::NewSessionRequest::default())
            .await
            .unwrap();
        wait_run(&mut h.client, "ok", added, refreshed).await;
        assert_eq!(mem.requests().len(), i + 1);
        assert!(prompt(&mem, i).contains(said));
    }
    let list = memories(&mut h.client).await;
    let cats: Vec<_> = list.iter().filter(|m| m.text.contains("米索")).collect();
    assert_eq!(cats.len(), 1, "{list:?}");
    assert_eq!(list.len(), 2, "{list:?}");
    // `/forget` works on automatic memories as on any other.
    let req = pb::DeleteMemoriesRequest {
        numbers: vec![1, 2],
        ..Default::default()
    };
    let deleted = h.client.delete_memories(req).await.unwrap().into_inner();
    assert_eq!(deleted.deleted, 2);
    assert!(memories(&mut h.client).await.is_empty());
}

#[tokio::test]
async fn malformed_answers_a_500_and_a_stall_leave_memory_unchanged_and_are_logged() {
    let (logs, _guard) = LogCapture::install();
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem, "interval = 1\ntimeout_secs = 1")).await;
    let req = pb::AddMemoryRequest {
        text: "主人住在上海".into(),
    };
    h.client.add_memory(req).await.unwrap();
    mem.push(Script::text("好的，以下是总结：主人喜欢喝茶。"));
    mem.push(Script::text(
        r#"{"facts": [{"text": "主人喜欢喝茶", "importance": 9}]}"#,
    ));
    completed(&turn(&mut h.client, "我喜欢喝茶").await);
    wait_run(&mut h.client, "malformed", 0, 0).await;
    assert_eq!(
        mem.requests().len(),
        2,
        "a malformed answer is asked for once more"
    );
    mem.push(HttpError::new(ErrorKind::Internal));
    completed(&turn(&mut h.client, "我也喜欢咖啡").await);
    wait_run(&mut h.client, "failed", 0, 0).await;
    assert_eq!(
        mem.requests().len(),
        3,
        "a provider error is not retried at once"
    );
    mem.push(Script::stall());
    completed(&turn(&mut h.client, "还有可可").await);
    mem.wait_requests(4, DEADLINE).await;
    eventually("the stall to be logged", DEADLINE, async || {
        logs.lines()
            .iter()
            .filter(|l| l.contains("the extraction call failed; nothing changed"))
            .count()
            >= 2
    })
    .await;
    let list = memories(&mut h.client).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].text, "主人住在上海");
    assert_eq!(note(&mut h.client, "").await.text, None);
    let lines = logs.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("the answer is malformed; asking once more")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("the answer was malformed twice; these messages are skipped")),
        "{lines:#?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("sk-test-memory-key-0123456789abcdef")),
        "no key in the logs"
    );
}

#[tokio::test]
async fn recalled_memories_are_not_re_added() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem, "interval = 1")).await;
    let req = pb::AddMemoryRequest {
        text: "主人喜欢喝乌龙茶".into(),
    };
    h.client.add_memory(req).await.unwrap();
    mem.push(Script::text(facts(&["主人喜欢喝乌龙茶"])));
    completed(&turn(&mut h.client, "推荐一款乌龙茶吧").await);
    let chat = main.last_request().unwrap().raw_body;
    assert!(
        chat.contains("长期记忆（自动召回）"),
        "the memory was recalled"
    );
    wait_run(&mut h.client, "ok", 0, 1).await;
    let text = prompt(&mem, 0);
    assert!(text.contains("推荐一款乌龙茶吧"), "{text}");
    for never in ["长期记忆（自动召回）", "当前时间"] {
        assert!(!text.contains(never), "{never} in {text}");
    }
    let list = memories(&mut h.client).await;
    assert_eq!(list.len(), 1, "{list:?}");
    assert!(!list[0].auto, "the owner's memory stays the owner's");
}

#[tokio::test]
async fn disabled_it_makes_no_model_calls() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem, "enabled = false\ninterval = 1")).await;
    for text in ["我对花生过敏", "我的猫叫米索"] {
        completed(&turn(&mut h.client, text).await);
    }
    h.client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    completed(&turn(&mut h.client, "你好").await);
    let s = status(&mut h.client).await;
    assert!(!s.enabled);
    assert_eq!(s.last_run, None);
    assert!(mem.requests().is_empty(), "{:?}", mem.requests());
    assert_eq!(
        main.requests().len(),
        3,
        "only the three turns called a model"
    );
    assert_eq!(note(&mut h.client, "").await.text, None);
}
