//! Long-term memory in turns, for both provider kinds: recall lands in the per-turn part of the
//! newest user message (never in the system prompt, the history prefix or the stored
//! transcript), and the model's memory_* tool calls round-trip through a turn.

use kernel_agentd::conversation::Block;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tests::chat::{KINDS, completed, session_id, stored, system_text, turn, wire_messages};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tonic::transport::Channel;

const HEADING: &str = "## 长期记忆（自动召回）";

/// Today in the test config's time zone: recalled memories carry their local date.
fn today() -> String {
    // Asia/Shanghai: UTC+8 all year.
    let tz = chrono::FixedOffset::east_opt(8 * 3600).unwrap();
    chrono::Utc::now()
        .with_timezone(&tz)
        .format("%Y-%m-%d")
        .to_string()
}

async fn add(c: &mut AgentClient<Channel>, text: &str) -> i64 {
    let req = pb::AddMemoryRequest { text: text.into() };
    c.add_memory(req).await.unwrap().into_inner().id
}

async fn memories(c: &mut AgentClient<Channel>) -> Vec<pb::MemoryInfo> {
    let req = pb::ListMemoriesRequest {};
    c.list_memories(req).await.unwrap().into_inner().memories
}

/// The newest user message of a request body and everything before it, as JSON text.
fn split_newest(body: &Value) -> (String, String) {
    let messages = wire_messages(body);
    let (newest, older) = messages.split_last().expect("messages");
    (newest.to_string(), Value::Array(older.to_vec()).to_string())
}

/// The tool results of a stored transcript.
fn tool_results(history: &[kernel_agentd::conversation::Message]) -> Vec<(String, bool)> {
    history
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn recall_is_in_the_per_turn_block_only() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), "")).await;
        let tea = add(&mut h.client, "主人喜欢喝乌龙茶").await;
        let city = add(&mut h.client, "主人住在上海").await;
        let cat = add(&mut h.client, "The owner's cat is called Miso").await;
        fake.push(Script::text("推荐冻顶乌龙。"));
        fake.push(Script::text("Hello!"));
        let first = turn(&mut h.client, "我想喝乌龙茶，有推荐吗").await;
        completed(&first);
        completed(&turn(&mut h.client, "hello").await);

        let requests = fake.requests();
        let (r1, r2) = (&requests[0].body, &requests[1].body);
        let (newest, older) = split_newest(r1);
        let day = today();
        let tea_line = format!("{HEADING}\\n- [{tea}] ({day}) 主人喜欢喝乌龙茶");
        assert!(
            newest.contains(&tea_line),
            "{kind}: matching memory recalled: {newest}"
        );
        assert!(
            !newest.contains("主人住在上海"),
            "{kind}: only matches: {newest}"
        );
        assert!(!older.contains("主人喜欢喝乌龙茶"), "{kind}");

        // No match: the most recent memories, newest first.
        let (newest, older) = split_newest(r2);
        let recent = format!(
            "{HEADING}\\n- [{cat}] ({day}) The owner's cat is called Miso\\n- [{city}] ({day}) 主人住在上海\\n- [{tea}] ({day}) 主人喜欢喝乌龙茶"
        );
        assert!(
            newest.contains(&recent),
            "{kind}: most recent recalled: {newest}"
        );
        assert!(
            !older.contains("- [") && !older.contains("主人住在上海"),
            "{kind}: the history prefix carries no recall: {older}"
        );
        assert!(older.contains("我想喝乌龙茶，有推荐吗"), "{kind}: {older}");

        for r in [r1, r2] {
            let system = system_text(r);
            assert!(
                !system.contains("- [") && !system.contains("乌龙茶"),
                "{kind}: {system}"
            );
        }
        assert_eq!(
            r1["tools"].to_string(),
            r2["tools"].to_string(),
            "{kind}: stable tools"
        );
        let history = stored(&h.cfg, session_id(&first)).await;
        let stored_text = format!("{history:?}");
        assert!(
            !stored_text.contains("长期记忆") && !stored_text.contains("上海"),
            "{kind}: {stored_text}"
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn no_memories_no_recall_heading() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    completed(&turn(&mut h.client, "你好").await);
    let (newest, _) = split_newest(&fake.requests()[0].body);
    assert!(
        newest.contains("[当前时间: ") && !newest.contains(HEADING),
        "{newest}"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_model_requested_memory_add_round_trips() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), "")).await;
        fake.push(Script::tool_call(
            "memory_add",
            r#"{"text":"主人的猫叫小黑"}"#,
        ));
        fake.push(Script::text("记住了。"));
        fake.push(Script::text("它叫小黑。"));
        let events = turn(&mut h.client, "记住：我的猫叫小黑").await;
        assert_eq!(completed(&events).text, "记住了。");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::ToolFinished(t) if t.ok)),
            "{kind}: {events:?}"
        );

        let listed = memories(&mut h.client).await;
        assert_eq!(listed.len(), 1, "{kind}: {listed:?}");
        assert_eq!(listed[0].text, "主人的猫叫小黑");
        let id = listed[0].id;
        let history = stored(&h.cfg, session_id(&events)).await;
        assert_eq!(
            tool_results(&history),
            [(format!(r#"{{"id":{id}}}"#), false)]
        );
        let second = &fake.requests()[1].raw_body;
        assert!(
            second.contains(&format!(r#"{{\"id\":{id}}}"#)),
            "{kind}: {second}"
        );

        completed(&turn(&mut h.client, "我的猫叫什么？").await);
        let (newest, _) = split_newest(&fake.requests()[2].body);
        assert!(
            newest.contains(&format!("- [{id}] ({}) 主人的猫叫小黑", today())),
            "{kind}: {newest}"
        );
        assert_eq!(
            memories(&mut h.client).await.len(),
            1,
            "{kind}: recall is not re-added"
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn memory_tools_are_offered_and_answer_in_the_seed_shapes() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let weather = add(&mut h.client, "北京的天气很好").await;
    add(&mut h.client, "主人喜欢猫").await;
    fake.push(Script::tool_call(
        "memory_search",
        r#"{"query":"北京天气","limit":1000}"#,
    ));
    fake.push(Script::tool_call("memory_list", r#"{"limit":-5}"#));
    fake.push(Script::tool_call(
        "memory_delete",
        format!(r#"{{"id":{weather}}}"#),
    ));
    fake.push(Script::tool_call("memory_delete", r#"{"id":123456}"#));
    fake.push(Script::tool_call("memory_add", r#"{"text":"   "}"#));
    fake.push(Script::text("好了。"));
    let events = turn(&mut h.client, "整理一下记忆").await;
    completed(&events);

    let tools = fake.requests()[0].body["tools"].to_string();
    for name in [
        "memory_add",
        "memory_search",
        "memory_list",
        "memory_delete",
    ] {
        assert!(
            tools.contains(&format!("\"{name}\"")),
            "{name} offered: {tools}"
        );
    }
    let results = tool_results(&stored(&h.cfg, session_id(&events)).await);
    assert_eq!(results.len(), 5, "{results:?}");

    let search: Value = serde_json::from_str(&results[0].0).unwrap();
    let hits = search.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{search}");
    assert_eq!(hits[0]["id"], weather);
    assert_eq!(hits[0]["text"], "北京的天气很好");
    let created = hits[0]["created_at"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(created).is_ok() && created.ends_with("+08:00"),
        "{created}"
    );
    let listed: Value = serde_json::from_str(&results[1].0).unwrap();
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "limit clamped to 1: {listed}"
    );
    assert_eq!(listed[0]["text"], "主人喜欢猫", "newest first");
    assert_eq!(results[2], (r#"{"ok":true}"#.to_owned(), false));
    assert_eq!(results[3], (r#"{"ok":false}"#.to_owned(), false));
    assert!(
        results[4].1 && results[4].0.contains("empty"),
        "{:?}",
        results[4]
    );

    let left = memories(&mut h.client).await;
    assert_eq!(
        left.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["主人喜欢猫"]
    );
    h.stop().await;
}
