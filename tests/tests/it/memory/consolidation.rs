//! Memory consolidation end to end (issue 39; in-process agentd, the fake LLM for chat and a
//! second one as the cheap model of both auto memory and consolidation, which runs after every
//! auto-memory run with `interval_hours = 0`): three near-duplicate automatic memories become
//! one (the earliest date kept), a done task is retired, a contradicted fact is superseded and no
//! longer recalled or searched, `ListMemoriesPage` lists the set-aside ones on request, and undo
//! puts everything back; an owner's memory is only ever proposed for a merge (a notice with
//! buttons through the outbox) and merged when the owner says so, a stale or forged decision
//! changing nothing; a 5xx, malformed JSON, unknown ids or an owner's memory in a merge change
//! nothing.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::chat::{completed, turn};
use tests::config::{TestConfig, memory_provider};
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, Script};
use tests::harness::Harness;
use tests::wait::eventually;
use tonic::transport::Channel;

const DEADLINE: Duration = Duration::from_secs(20);

/// Chat through `main`; auto memory after every user message and consolidation after every
/// auto-memory run, both through `mem`.
fn config(main: &FakeLlm, mem: &FakeLlm) -> TestConfig {
    let memory_auto = "interval = 1\n\n[memory.consolidation]\ninterval_hours = 0";
    TestConfig::new(&main.url(), &memory_provider(&mem.url(), memory_auto))
}

/// An extraction answer with these facts (importance 4).
fn facts(facts: &[&str]) -> String {
    let items: Vec<serde_json::Value> = facts
        .iter()
        .map(|f| serde_json::json!({"text": f, "importance": 4}))
        .collect();
    serde_json::json!({ "facts": items }).to_string()
}

async fn status(c: &mut AgentClient<Channel>) -> pb::ConsolidationStatus {
    let s = c.get_status(pb::GetStatusRequest {}).await.unwrap();
    s.into_inner().consolidation.expect("consolidation status")
}

/// Waits for the `n`-th run of the job (counted by run id) and returns it.
async fn wait_run(c: &mut AgentClient<Channel>, n: i64) -> pb::ConsolidationRun {
    eventually(format!("consolidation run {n}"), DEADLINE, async || {
        status(c)
            .await
            .last_run
            .is_some_and(|r| r.id >= n && !r.at.is_empty())
    })
    .await;
    status(c).await.last_run.unwrap()
}

async fn page(
    c: &mut AgentClient<Channel>,
    include_superseded: bool,
) -> pb::ListMemoriesPageResponse {
    let req = pb::ListMemoriesPageRequest {
        page: 1,
        include_superseded,
    };
    c.list_memories_page(req).await.unwrap().into_inner()
}

async fn texts(c: &mut AgentClient<Channel>) -> Vec<String> {
    page(c, false)
        .await
        .memories
        .into_iter()
        .map(|m| m.text)
        .collect()
}

async fn search(c: &mut AgentClient<Channel>, query: &str) -> Vec<String> {
    let req = pb::SearchMemoriesRequest {
        query: query.into(),
        limit: 10,
        ..Default::default()
    };
    let found = c.search_memories(req).await.unwrap().into_inner();
    found.memories.into_iter().map(|m| m.text).collect()
}

/// The job's prompt (the user message of `mem`'s `i`-th request).
fn prompt(mem: &FakeLlm, i: usize) -> String {
    mem.requests()[i].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn duplicates_merge_a_done_task_retires_a_contradicted_fact_is_superseded_and_undo_restores()
{
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem)).await;
    let owner = pb::AddMemoryRequest {
        text: "主人住在上海".into(),
    };
    assert_eq!(h.client.add_memory(owner).await.unwrap().into_inner().id, 1);
    // Memories 2..=7, in this order.
    mem.push(Script::text(facts(&[
        "主人的猫叫米索",
        "主人养了一只名叫米索的猫",
        "米索是主人的橘猫",
        "主人要在周五前交季度报告",
        "主人的车是白色的",
        "主人新买的车是红色的",
    ])));
    mem.push(Script::text(
        r#"{"merge": [{"ids": [2, 3, 4], "text": "主人养了一只橘猫，名叫米索"}],
            "retire": [5], "supersede": [{"old": 6, "new": 7}], "propose": []}"#,
    ));
    completed(&turn(&mut h.client, "季度报告周五前交完了").await);
    let run = wait_run(&mut h.client, 1).await;
    assert_eq!(
        (
            run.outcome.as_str(),
            run.merged,
            run.retired,
            run.superseded
        ),
        ("ok", 1, 1, 1),
        "{run:?}"
    );
    assert!(status(&mut h.client).await.enabled);
    let asked = prompt(&mem, 1);
    assert!(
        asked.contains("[2] (auto, ") && asked.contains("[1] (manual, "),
        "the job sees ids, kinds and dates: {asked}"
    );
    let before = page(&mut h.client, false).await;
    assert_eq!(
        texts(&mut h.client).await,
        [
            "主人新买的车是红色的",
            "主人养了一只橘猫，名叫米索",
            "主人住在上海"
        ]
    );
    assert_eq!(before.total, 3);
    // The set-aside ones, on request, each with why.
    let all = page(&mut h.client, true).await;
    assert_eq!(all.total, 7);
    let aside: Vec<(i64, &str, i64)> = all
        .memories
        .iter()
        .filter(|m| m.superseded)
        .map(|m| (m.id, m.superseded_reason.as_str(), m.superseded_by))
        .collect();
    assert_eq!(
        aside,
        [
            (6, "superseded", 7),
            (5, "retired", 0),
            (4, "merged", 2),
            (3, "merged", 2)
        ]
    );
    // Neither searched nor recalled.
    assert!(search(&mut h.client, "白色").await.is_empty());
    assert_eq!(
        search(&mut h.client, "米索").await,
        ["主人养了一只橘猫，名叫米索"]
    );
    completed(&turn(&mut h.client, "我的车是什么颜色").await);
    let chat = main.last_request().unwrap().raw_body;
    assert!(chat.contains("红色"), "the newer fact is recalled: {chat}");
    assert!(!chat.contains("白色"), "the superseded fact is not: {chat}");
    // Undo puts everything back, once.
    let undo = pb::UndoConsolidationRequest { run_id: 0 };
    let undone = h
        .client
        .undo_consolidation(undo)
        .await
        .unwrap()
        .into_inner();
    assert!(undone.undone);
    assert_eq!((undone.run_id, undone.restored), (run.id, 5));
    let back = texts(&mut h.client).await;
    assert_eq!(back.len(), 7, "{back:?}");
    assert!(back.contains(&"主人的猫叫米索".to_owned()), "{back:?}");
    assert!(!back.iter().any(|t| t.contains("橘猫，名叫")), "{back:?}");
    assert_eq!(search(&mut h.client, "白色").await, ["主人的车是白色的"]);
    assert!(status(&mut h.client).await.last_run.unwrap().undone);
    let again = pb::UndoConsolidationRequest { run_id: run.id };
    let again = h
        .client
        .undo_consolidation(again)
        .await
        .unwrap()
        .into_inner();
    assert!(!again.undone, "a run is undone once");
    let bad = pb::UndoConsolidationRequest { run_id: -1 };
    let bad = h.client.undo_consolidation(bad).await.unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
}

#[tokio::test]
async fn an_owners_memory_is_only_merged_when_the_owner_presses_merge() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem)).await;
    let owner = pb::AddMemoryRequest {
        text: "主人喜欢乌龙茶".into(),
    };
    h.client.add_memory(owner).await.unwrap();
    let mut outbox = h
        .client
        .subscribe(pb::SubscribeRequest { after_seq: 0 })
        .await
        .unwrap()
        .into_inner();
    mem.push(Script::text(facts(&[
        "主人每天下午都要喝一杯乌龙",
        "主人的生日是三月",
    ])));
    // Merging the owner's memory outright is refused as a whole: nothing changes.
    mem.push(Script::text(
        r#"{"merge": [{"ids": [1, 2], "text": "主人每天下午喝乌龙茶"}]}"#,
    ));
    completed(&turn(&mut h.client, "下午茶时间").await);
    let run = wait_run(&mut h.client, 1).await;
    assert_eq!(run.outcome, "malformed");
    assert_eq!(texts(&mut h.client).await.len(), 3);
    mem.push(Script::text(facts(&["主人周末爱去西湖"])));
    mem.push(Script::text(
        r#"{"propose": [{"ids": [1, 2], "text": "主人喜欢乌龙茶，每天下午喝一杯"}]}"#,
    ));
    completed(&turn(&mut h.client, "周末去西湖").await);
    let run = wait_run(&mut h.client, 2).await;
    assert_eq!((run.outcome.as_str(), run.proposed), ("ok", 1), "{run:?}");
    let list = texts(&mut h.client).await;
    assert!(
        list.contains(&"主人喜欢乌龙茶".to_owned()),
        "untouched: {list:?}"
    );
    assert_eq!(list.len(), 4);
    let proposal = loop {
        let event = tokio::time::timeout(DEADLINE, outbox.message())
            .await
            .expect("an outbox item in time")
            .unwrap()
            .unwrap();
        if let Some(pb::delivery_event::Event::Item(item)) = event.event
            && let Some(pb::outbox_item::Body::MemoryProposal(p)) = item.body
        {
            break p;
        }
    };
    assert!(
        proposal.text.contains("主人喜欢乌龙茶") && proposal.text.contains("每天下午喝一杯"),
        "{}",
        proposal.text
    );
    let decide = |proposal_id, merge| pb::DecideMemoryProposalRequest { proposal_id, merge };
    let forged = h
        .client
        .decide_memory_proposal(decide(999, true))
        .await
        .unwrap();
    assert_eq!(forged.into_inner().outcome, "stale");
    assert_eq!(texts(&mut h.client).await.len(), 4);
    let merged = h
        .client
        .decide_memory_proposal(decide(proposal.proposal_id, true))
        .await
        .unwrap();
    assert_eq!(merged.into_inner().outcome, "merged");
    let list = page(&mut h.client, false).await;
    let texts_now: Vec<&str> = list.memories.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(list.total, 3, "{texts_now:?}");
    let kept = list
        .memories
        .iter()
        .find(|m| m.id == 1)
        .expect("the owner's memory kept");
    assert_eq!(kept.text, "主人喜欢乌龙茶，每天下午喝一杯");
    assert!(!kept.auto, "still the owner's");
    let twice = h
        .client
        .decide_memory_proposal(decide(proposal.proposal_id, false))
        .await
        .unwrap();
    assert_eq!(twice.into_inner().outcome, "stale", "decided once");
    // The owner's merge is undone like the job's.
    let undo = pb::UndoConsolidationRequest { run_id: 0 };
    assert!(
        h.client
            .undo_consolidation(undo)
            .await
            .unwrap()
            .into_inner()
            .undone
    );
    assert!(
        texts(&mut h.client)
            .await
            .contains(&"主人喜欢乌龙茶".to_owned())
    );
}

#[tokio::test]
async fn a_failed_call_malformed_json_or_unknown_ids_change_nothing() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem)).await;
    mem.push(Script::text(facts(&[
        "主人的猫叫米索",
        "主人养了一只名叫米索的猫",
    ])));
    mem.push(HttpError::new(ErrorKind::Internal));
    completed(&turn(&mut h.client, "我的猫").await);
    assert_eq!(wait_run(&mut h.client, 1).await.outcome, "failed");
    let answers = [
        "好的，我来整理一下：合并 2 和 3。".to_owned(),
        r#"{"merge": [{"ids": [1, 99], "text": "主人的猫叫米索"}]}"#.to_owned(),
        r#"{"merge": [{"ids": [1, 2], "text": "主人的猫叫米索"}], "forget": [1]}"#.to_owned(),
        r#"{"retire": [1, 1]}"#.to_owned(),
    ];
    for (i, answer) in answers.iter().enumerate() {
        mem.push(Script::text(facts(&[])));
        mem.push(Script::text(answer.clone()));
        completed(&turn(&mut h.client, &format!("第 {i} 次")).await);
        let run = wait_run(&mut h.client, i as i64 + 2).await;
        assert_eq!(run.outcome, "malformed", "{answer}");
        assert_eq!((run.merged, run.retired, run.superseded), (0, 0, 0));
    }
    let list = page(&mut h.client, true).await;
    assert_eq!(list.total, 2, "nothing set aside: {list:?}");
    assert!(list.memories.iter().all(|m| !m.superseded));
    let undo = pb::UndoConsolidationRequest { run_id: 0 };
    let undone = h
        .client
        .undo_consolidation(undo)
        .await
        .unwrap()
        .into_inner();
    assert!(!undone.undone, "nothing to undo");
}
