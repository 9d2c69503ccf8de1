//! Trust (issue 39): a fact that only an MCP tool's result held (server-everything's echo, on
//! stdio) is read by auto memory as outside content, stored marked as from that tool, listed so,
//! and recalled with that label — never as something the owner said; the owner's own fact in the
//! same run carries no label.

use std::time::Duration;

use kernel_proto::v1 as pb;
use tests::chat::{completed, turn};
use tests::config::{TestConfig, memory_provider};
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::harness::Harness;
use tests::mcp_support::{stdio_toml, wait_for_server};
use tests::wait::eventually;

const DEADLINE: Duration = Duration::from_secs(20);
const TOOL: &str = "mcp_everything__echo";

fn config(main: &FakeLlm, mem: &FakeLlm) -> TestConfig {
    let extra = memory_provider(&mem.url(), &stdio_toml("everything"));
    TestConfig::new(&main.url(), &extra)
}

#[tokio::test]
async fn a_fact_only_a_tool_returned_is_stored_and_recalled_as_from_that_tool() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem)).await;
    wait_for_server(&mut h.client, "everything", "connected").await;
    main.push(Reply::default().tool(FakeToolCall::new(
        TOOL,
        r#"{"message":"项目代号是蓝鲸"}"#.to_owned(),
    )));
    main.push(Script::text("查到了：项目代号是蓝鲸。"));
    completed(&turn(&mut h.client, "用 echo 工具查一下项目代号").await);
    completed(&turn(&mut h.client, "另外，我喜欢喝乌龙茶").await);
    // The cheap model names no source: agentd tells by itself where each fact came from.
    mem.push(Script::text(
        serde_json::json!({"facts": [
            {"text": "项目代号是蓝鲸", "importance": 4},
            {"text": "主人喜欢喝乌龙茶", "importance": 4}
        ]})
        .to_string(),
    ));
    h.client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    eventually("two automatic memories", DEADLINE, async || {
        let req = pb::ListMemoriesPageRequest {
            page: 1,
            ..Default::default()
        };
        let page = h.client.list_memories_page(req).await.unwrap();
        page.into_inner().total == 2
    })
    .await;
    let prompt = mem.requests()[0].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.contains(&format!("工具 {TOOL} 的结果（外部内容，不是主人说的）: ")),
        "the tool's result is read as outside content: {prompt}"
    );
    let req = pb::ListMemoriesPageRequest {
        page: 1,
        ..Default::default()
    };
    let list = h.client.list_memories_page(req).await.unwrap().into_inner();
    let origin_of = |text: &str| {
        list.memories
            .iter()
            .find(|m| m.text == text)
            .map(|m| m.origin.clone())
            .unwrap_or_else(|| panic!("{text} not stored: {list:?}"))
    };
    assert_eq!(origin_of("项目代号是蓝鲸"), format!("tool {TOOL}"));
    assert_eq!(origin_of("主人喜欢喝乌龙茶"), "", "the owner's own word");
    // Recalled with its label.
    main.push(Script::text("蓝鲸。"));
    completed(&turn(&mut h.client, "项目代号是什么").await);
    let body = main.requests().last().unwrap().body.to_string();
    assert!(
        body.contains(&format!("[来源: tool {TOOL}，不是主人说的] 项目代号是蓝鲸")),
        "{body}"
    );
}
