//! What history the model gets and what is stored: repair of a broken transcript on load,
//! slimming on save, the round window, and the cache-stable prefix.

use std::sync::Arc;

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::store::Store;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use regex::Regex;
use serde_json::{Value, json};
use tests::chat::{
    KINDS, completed, rest, session_id, stored, system_text, turn, wire_messages,
    without_cache_control,
};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::harness::Harness;
use tests::test_tools::{Echo, Fixed, FixedMemories, with_tools};

fn call(id: &str) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: "echo".into(),
        input: json!({"text": "x"}),
    }
}

#[tokio::test]
async fn a_broken_transcript_is_repaired_on_load() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::with_kind(kind, &fake.url(), "");
        let store = Store::open(&cfg.data_dir().join("kernel.db"))
            .await
            .unwrap();
        let session = store.create_session("fake", "fake-model").await.unwrap();
        let broken = [
            Message::user_text("第一个问题"),
            Message {
                role: Role::Assistant,
                content: vec![Block::text("我查一下"), call("toolu_dangling")],
            },
            Message::user_text("第二个问题"),
            Message::assistant_text("回答二"),
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    call_id: "toolu_orphan".into(),
                    content: "ORPHAN-RESULT".into(),
                    is_error: false,
                }],
            },
            Message::assistant_text("回答三"),
            Message {
                role: Role::Assistant,
                content: vec![call("toolu_tail")],
            },
        ];
        store.append_messages(session.id, &broken).await.unwrap();
        store.close().await;

        let mut h = Harness::start_with(cfg, with_tools(vec![Arc::new(Echo::default())])).await;
        let listed = h
            .client
            .list_sessions(pb::ListSessionsRequest {})
            .await
            .unwrap()
            .into_inner()
            .sessions;
        assert_eq!(listed[0].id, session.id);
        h.client
            .resume_session(pb::ResumeSessionRequest {
                number: 1,
                thread_id: None,
            })
            .await
            .unwrap();

        fake.push(Script::text("修好了"));
        let events = turn(&mut h.client, "第三个问题").await;
        assert_eq!(session_id(&events), session.id);
        assert_eq!(
            completed(&events).text,
            "修好了",
            "{kind}: the strict fake accepted the repaired history"
        );
        let body = &fake.last_request().unwrap().raw_body;
        assert!(
            !body.contains("ORPHAN-RESULT"),
            "{kind}: the orphan result is dropped"
        );
        assert_eq!(
            body.matches("interrupted").count(),
            2,
            "{kind}: both dangling calls are closed"
        );
        h.stop().await;
    }
}

#[tokio::test]
async fn history_is_slimmed_on_save_while_the_model_saw_everything() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let big = "大".repeat(500);
        let cli = json!({"ok": true, "cli": "claude_code", "exit_code": 0,
            "output_path": "data/cli_outputs/task-1.txt", "output": "refactor done"})
        .to_string();
        let tools = with_tools(vec![
            Arc::new(Fixed {
                name: "big",
                content: big.clone(),
            }),
            Arc::new(Fixed {
                name: "delegate_to_cli",
                content: cli.clone(),
            }),
            Arc::new(Fixed {
                name: "small",
                content: "tiny".into(),
            }),
        ]);
        let mut h = Harness::start_with(TestConfig::with_kind(kind, &fake.url(), ""), tools).await;
        let reply = Reply::default()
            .tool(FakeToolCall::new("big", "{}"))
            .tool(FakeToolCall::new("delegate_to_cli", "{}"))
            .tool(FakeToolCall::new("small", "{}"));
        fake.push(reply);
        fake.push(Script::text("看完了"));
        let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3, 4, 5, 6, 7, 8];
        let image = pb::Attachment {
            kind: Some(pb::attachment::Kind::Image(pb::Image {
                data: png.clone(),
                mime_type: "image/png".into(),
            })),
        };
        let req = pb::ChatRequest {
            text: "看图".into(),
            attachments: vec![image],
            ..Default::default()
        };
        let mut stream = h.client.chat(req).await.unwrap().into_inner();
        let events = rest(&mut stream).await;
        assert_eq!(completed(&events).text, "看完了", "{kind}: {events:?}");

        let requests = fake.requests();
        let as_block = Block::Image {
            mime_type: "image/png".into(),
            data: png.clone(),
        };
        let b64 = serde_json::to_value(&as_block).unwrap()["data"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            requests[0].raw_body.contains(&b64),
            "{kind}: the model saw the image"
        );
        let second: Value = requests[1].body.clone();
        let second = second.to_string();
        assert!(
            second.contains(&big) && second.contains("refactor done"),
            "{kind}: full results"
        );

        let history = stored(&h.cfg, session_id(&events)).await;
        assert_eq!(
            history[0].content,
            vec![Block::text("[图片已处理]"), Block::text("看图")]
        );
        let results: Vec<&str> = history[2]
            .content
            .iter()
            .filter_map(|b| {
                if let Block::ToolResult { content, .. } = b {
                    Some(content.as_str())
                } else {
                    None
                }
            })
            .collect();
        let n = cli.chars().count();
        assert_eq!(
            results,
            vec![
                format!("big 结果已处理(成功)，500 字符，开头：{}…", "大".repeat(80)),
                format!(
                    "delegate_to_cli 结果已处理(成功)，{n} 字符，claude_code 退出码 0，\
                     详见 data/cli_outputs/task-1.txt，开头：refactor done"
                ),
                "tiny".to_owned(),
            ]
        );

        fake.push(Script::text("好的"));
        let events = turn(&mut h.client, "继续").await;
        completed(&events);
        let third = &fake.last_request().unwrap().raw_body;
        assert!(
            third.contains("[图片已处理]") && third.contains("big 结果已处理(成功)，500 字符"),
            "{kind}"
        );
        assert!(
            third.contains("delegate_to_cli 结果已处理(成功)")
                && third.contains("claude_code 退出码 0")
                && third.contains("开头：refactor done"),
            "{kind}: the delegation's line names the CLI, its exit code and its answer: {third}"
        );
        assert!(
            !third.contains(&b64) && !third.contains(&big),
            "{kind}: later turns see the slimmed history"
        );
        h.stop().await;
    }
}

/// A page returned by a real MCP tool (server-everything's `echo`) is slimmed once the turn is
/// stored; the next request still carries its first 80 characters on one line, the same bytes
/// on every later request.
#[tokio::test]
async fn a_slimmed_mcp_page_keeps_its_first_characters_in_the_next_request() {
    let fake = FakeLlm::start().await;
    let mcp = tests::mcp_support::stdio_toml("everything");
    let mut h = Harness::start(TestConfig::new(&fake.url(), &mcp)).await;
    tests::mcp_support::wait_for_server(&mut h.client, "everything", "connected").await;
    let page = format!(
        "<h1>Kernel 发布说明</h1>\n\t版本 0.9：切片历史保留预览。{}",
        "正文".repeat(200)
    );
    let args = json!({ "message": page }).to_string();
    fake.push(Reply::default().tool(FakeToolCall::new("mcp_everything__echo", args)));
    fake.push(Script::text("读完了"));
    let events = turn(&mut h.client, "读一下这个页面").await;
    assert_eq!(completed(&events).text, "读完了", "{events:?}");

    fake.push(Script::text("好的"));
    completed(&turn(&mut h.client, "它说了什么？").await);
    fake.push(Script::text("嗯"));
    completed(&turn(&mut h.client, "再说一遍").await);
    let lines: Vec<String> = fake
        .requests()
        .iter()
        .filter_map(|r| {
            let raw = &r.raw_body;
            let start = raw.find("mcp_everything__echo 结果已处理(成功)")?;
            let end = raw[start..].find('"').map_or(raw.len(), |e| start + e);
            // The call's input still holds the page; its result (after "Echo: ") is gone.
            assert!(
                !raw.contains("Echo: <h1>Kernel 发布说明</h1>\\n\\t"),
                "slimmed: {raw}"
            );
            Some(raw[start..end].to_owned())
        })
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "both later turns carry the slimmed line: {lines:?}"
    );
    let shown = lines[0].split_once("，开头：").expect("a preview").1;
    assert!(
        shown.starts_with("Echo: <h1>Kernel 发布说明</h1> 版本 0.9：切片历史保留预览。正文"),
        "control characters gone, one line: {}",
        lines[0]
    );
    assert_eq!(
        shown.chars().count(),
        81,
        "80 characters and …: {}",
        lines[0]
    );
    assert_eq!(lines[1], lines[0], "byte-identical on every request");
    h.stop().await;
}

#[tokio::test]
async fn only_the_last_rounds_are_sent_and_tool_pairs_stay_whole() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::with_kind(kind, &fake.url(), "");
        cfg.rewrite(|t| {
            t.replace(
                "data_dir = \"data\"",
                "data_dir = \"data\"\ncontext_rounds = 2",
            )
        });
        let mut h = Harness::start_with(cfg, with_tools(vec![Arc::new(Echo::default())])).await;
        fake.push(Script::text("a1"));
        completed(&turn(&mut h.client, "q1-text").await);
        fake.push(Reply::default().tool(FakeToolCall::new("echo", r#"{"text":"pair"}"#)));
        fake.push(Script::text("a2"));
        completed(&turn(&mut h.client, "q2-text").await);
        fake.push(Script::text("a3"));
        completed(&turn(&mut h.client, "q3-text").await);
        assert!(
            fake.last_request().unwrap().raw_body.contains("q1-text"),
            "{kind}: q1 is within 2 rounds of q3"
        );

        fake.push(Script::text("a4"));
        completed(&turn(&mut h.client, "q4-text").await);
        let last = fake.last_request().unwrap();
        let messages = wire_messages(&last.body);
        assert!(
            !last.raw_body.contains("a1"),
            "{kind}: round 1 is no longer sent"
        );
        let first = messages[0].to_string();
        assert!(
            first.contains("[会话摘要]") && first.contains("q2-text"),
            "{kind}: starts with the summary, then round 2: {:?}",
            messages[0]
        );
        assert!(
            first.find("q1-text") < first.find("q2-text"),
            "{kind}: round 1 lives on in the summary (its goal)"
        );
        assert!(
            last.raw_body.contains("echo: pair"),
            "{kind}: the tool pair is whole"
        );
        assert!(last.raw_body.contains("q3-text") && last.raw_body.contains("q4-text"));
        h.stop().await;
    }
}

#[tokio::test]
async fn consecutive_turns_share_a_byte_identical_prefix_without_time_or_memories() {
    let time =
        Regex::new(r"\[当前时间: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} \(Asia/Shanghai\)\]")
            .unwrap();
    let memory = "主人喜欢喝乌龙茶";
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut ext = with_tools(vec![Arc::new(Echo::default())]);
        ext.recall = Some(Arc::new(FixedMemories(vec![memory.into()])));
        let mut h = Harness::start_with(TestConfig::with_kind(kind, &fake.url(), ""), ext).await;
        for q in ["one", "two", "three"] {
            fake.push(Script::text(format!("answer {q}")));
            completed(&turn(&mut h.client, q).await);
        }
        let requests = fake.requests();
        let (r1, r2, r3) = (&requests[0].body, &requests[1].body, &requests[2].body);

        let system = system_text(r1);
        assert!(!system.is_empty());
        assert_eq!(system_text(r2), system, "{kind}");
        assert_eq!(system_text(r3), system, "{kind}");
        assert_eq!(
            r1["system"].to_string(),
            r2["system"].to_string(),
            "{kind}: byte-identical system"
        );
        assert_eq!(
            r1["tools"].to_string(),
            r2["tools"].to_string(),
            "{kind}: byte-identical tools"
        );
        assert!(r1["tools"].to_string().contains("echo"));
        assert!(
            !time.is_match(&system) && !system.contains(memory),
            "{kind}: no per-turn material in system"
        );

        for r in [r1, r2, r3] {
            let messages = wire_messages(r);
            let (newest, older) = messages.split_last().unwrap();
            assert!(
                time.is_match(&newest.to_string()),
                "{kind}: time in the newest user message: {newest}"
            );
            assert!(
                newest.to_string().contains(memory),
                "{kind}: memories in the newest user message"
            );
            let older = Value::Array(older.to_vec()).to_string();
            assert!(
                !time.is_match(&older) && !older.contains(memory),
                "{kind}: never stored: {older}"
            );
        }
        let m2 = wire_messages(r2);
        let m3 = wire_messages(r3);
        let stable = m2.len() - 1;
        assert_eq!(
            without_cache_control(&Value::Array(m2[..stable].to_vec())).to_string(),
            without_cache_control(&Value::Array(m3[..stable].to_vec())).to_string(),
            "{kind}: the history prefix repeats byte for byte (cache markers aside)"
        );
        if kind == "claude" {
            let marked = m2[stable - 1].to_string();
            assert!(
                marked.contains("cache_control"),
                "the breakpoint ends the history: {marked}"
            );
        }
        h.stop().await;
    }
}

#[tokio::test]
async fn started_event_names_the_current_session() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let events = turn(&mut h.client, "hi").await;
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(
        matches!(events.first(), Some(Event::Started(s)) if Some(s.session_id) == status.current_session.map(|c| c.id))
    );
    h.stop().await;
}
