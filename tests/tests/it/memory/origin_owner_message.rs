//! Trust for what the owner's own message carries (issue 39): a fact that only an attached
//! document (stored slimmed to its placeholder, so only the answer that read it is left) or a
//! forwarded message held is read by auto memory as outside content, stored marked as from that
//! document or sender, and recalled with that label; the owner's own fact in
//! the same run carries none. (A background job's result — a delegated CLI's output — is told
//! apart the same way: `memory_auto::outside`'s and `transcript`'s unit tests.)

use std::time::Duration;

use kernel_proto::v1 as pb;
use tests::chat::{completed, rest, turn};
use tests::config::{TestConfig, memory_provider};
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::wait::eventually;

const DEADLINE: Duration = Duration::from_secs(20);

fn config(main: &FakeLlm, mem: &FakeLlm) -> TestConfig {
    TestConfig::new(&main.url(), &memory_provider(&mem.url(), ""))
}

#[tokio::test]
async fn facts_only_a_document_or_a_forward_held_are_stored_and_recalled_as_from_them() {
    let (main, mem) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config(&main, &mem)).await;
    let with_document = pb::ChatRequest {
        text: "看看这个文件".into(),
        attachments: vec![pb::Attachment {
            kind: Some(pb::attachment::Kind::Document(pb::Document {
                data: "项目预算是三百万元\n".as_bytes().to_vec(),
                file_name: "plan.md".into(),
            })),
        }],
        ..Default::default()
    };
    main.push(Script::text("看过了：文件里写着项目预算是三百万元。"));
    let mut stream = h.client.chat(with_document).await.unwrap().into_inner();
    completed(&rest(&mut stream).await);
    main.push(Script::text("知道了。"));
    let forwarded = "[转发自 Alice (@alice)，2026-11-27 21:04]\n服务器放在东京机房";
    completed(&turn(&mut h.client, forwarded).await);
    completed(&turn(&mut h.client, "另外，我喜欢喝乌龙茶").await);
    // The cheap model names no source: agentd tells by itself where each fact came from.
    mem.push(Script::text(
        serde_json::json!({"facts": [
            {"text": "项目预算是三百万元", "importance": 4},
            {"text": "服务器放在东京机房", "importance": 4},
            {"text": "主人喜欢喝乌龙茶", "importance": 4}
        ]})
        .to_string(),
    ));
    h.client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    let page = || pb::ListMemoriesPageRequest {
        page: 1,
        ..Default::default()
    };
    eventually("three automatic memories", DEADLINE, async || {
        let list = h.client.list_memories_page(page()).await.unwrap();
        list.into_inner().total == 3
    })
    .await;
    let prompt = mem.requests()[0].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.contains("外部内容（forwarded from Alice (@alice)，不是主人说的）")
            && !prompt.contains("主人: [转发自"),
        "read as outside content: {prompt}"
    );
    let list = h
        .client
        .list_memories_page(page())
        .await
        .unwrap()
        .into_inner();
    let origin_of = |text: &str| {
        list.memories
            .iter()
            .find(|m| m.text == text)
            .map(|m| m.origin.clone())
            .unwrap_or_else(|| panic!("{text} not stored: {list:?}"))
    };
    assert_eq!(origin_of("项目预算是三百万元"), "document plan.md");
    assert_eq!(
        origin_of("服务器放在东京机房"),
        "forwarded from Alice (@alice)"
    );
    assert_eq!(origin_of("主人喜欢喝乌龙茶"), "", "the owner's own word");
    main.push(Script::text("三百万。"));
    completed(&turn(&mut h.client, "项目预算是多少").await);
    let body = main.requests().last().unwrap().body.to_string();
    assert!(
        body.contains("[来源: document plan.md，不是主人说的] 项目预算是三百万元"),
        "{body}"
    );
}
