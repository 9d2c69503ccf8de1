//! The bridge over real HTTP on loopback: tokens live only as long as their lease, the tools
//! keep Kernel's limits, `approve` answers in Claude Code's permission-prompt shape.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::approval::Decision;
use super::*;
use crate::ask::Asks;
use crate::tools::{ToolEvent, ToolEvents};

#[derive(Debug)]
struct Always(bool);

#[async_trait::async_trait]
impl OwnerApproval for Always {
    async fn decide(&self, _: &approval::ApprovalRequest, _: &ToolContext, _: Locale) -> Decision {
        if self.0 {
            Decision::Allow
        } else {
            Decision::Deny("denied by the owner".into())
        }
    }
}

async fn bridge(outbox: Option<Arc<dyn NoteSink>>, allow: bool) -> (Bridge, ToolRegistry, Asks) {
    let tools = ToolRegistry::new();
    let asks = Asks::default();
    crate::ask::register_tool(&tools, &asks, std::time::Duration::from_secs(60)).unwrap();
    let b = Bridge::start(
        tools.clone(),
        outbox,
        Arc::new(Always(allow)),
        Locale::En,
        &TaskTracker::new(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    (b, tools, asks)
}

async fn post(url: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let client = crate::http::client().unwrap();
    let mut req = client.post(url).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn call(id: u64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn text(reply: &Value) -> (String, bool) {
    let r = &reply["result"];
    (
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        r["isError"] == true,
    )
}

#[tokio::test]
async fn a_token_works_only_while_its_delegation_runs() {
    let (b, _, _) = bridge(None, true).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let lease = b.open("claude_code", ToolContext::default(), true);
    let (status, _) = post(&lease.url, None, init.clone()).await;
    assert_eq!(status, 401, "no token");
    let (status, reply) = post(&lease.url, Some("0".repeat(64).as_str()), init.clone()).await;
    assert_eq!(status, 401, "a token of no delegation");
    assert_eq!(reply["error"]["code"], -32001);
    let (status, reply) = post(&lease.url, Some(lease.token()), init.clone()).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
    let (status, _) = post(
        &lease.url,
        Some(lease.token()),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    let (url, token) = (lease.url.clone(), lease.token().to_owned());
    drop(lease);
    let (status, _) = post(&url, Some(&token), init).await;
    assert_eq!(status, 401, "the delegation ended");
}

#[tokio::test]
async fn tools_are_listed_and_nothing_else_is_reachable() {
    let (b, _, _) = bridge(None, true).await;
    let lease = b.open("codex", ToolContext::default(), true);
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ask_owner") && names.contains(&"approve"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"ask_user"),
        "Kernel's own names stay inside"
    );
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(2, "ask_user", json!({})),
    )
    .await;
    assert_eq!(text(&reply), ("unknown tool \"ask_user\"".into(), true));
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32601);
}

#[tokio::test]
async fn ask_owner_is_kernels_question_with_its_limits() {
    let (b, _, asks) = bridge(None, true).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let ctx = ToolContext {
        events: ToolEvents::new({
            let seen = seen.clone();
            move |e| seen.lock().unwrap().push(e)
        }),
        ..ToolContext::default()
    };
    let lease = b.open("claude_code", ctx, true);
    let too_many: Vec<String> = (0..11).map(|i| i.to_string()).collect();
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(
            1,
            "ask_owner",
            json!({"question": "?", "options": too_many}),
        ),
    )
    .await;
    assert_eq!(
        text(&reply),
        (r#"{"error":"at most 10 options"}"#.into(), true)
    );
    let huge = "?".repeat(tools::MAX_QUESTION_CHARS + 1);
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(9, "ask_owner", json!({"question": huge})),
    )
    .await;
    assert_eq!(
        text(&reply),
        (
            "the question is 2001 characters long; at most 2000 are accepted".into(),
            true
        )
    );
    let asking = tokio::spawn({
        let (url, token) = (lease.url.clone(), lease.token().to_owned());
        async move {
            post(
                &url,
                Some(&token),
                call(
                    2,
                    "ask_owner",
                    json!({"question": "Which colour?", "options": ["red", "blue"]}),
                ),
            )
            .await
        }
    });
    let id = loop {
        let first = seen.lock().unwrap().first().cloned();
        if let Some(ToolEvent::Question { id, text, options }) = first {
            assert_eq!(text, "Which colour?");
            assert_eq!(options, ["red", "blue"]);
            break id;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert!(asks.answer(&id, Some(1), ""));
    let (_, reply) = asking.await.unwrap();
    assert_eq!(text(&reply), ("blue".into(), false));
}

#[tokio::test]
async fn approve_answers_in_the_permission_prompt_shape() {
    let input = json!({"command": "touch /x", "dangerouslyDisableSandbox": true});
    for (allow, expected) in [
        (true, json!({"behavior": "allow", "updatedInput": input})),
        (
            false,
            json!({"behavior": "deny", "message": "denied by the owner"}),
        ),
    ] {
        let (b, _, _) = bridge(None, allow).await;
        let lease = b.open("claude_code", ToolContext::default(), true);
        let (_, reply) = post(
            &lease.url,
            Some(lease.token()),
            call(1, "approve", json!({"tool_name": "Bash", "input": input})),
        )
        .await;
        let (answer, is_error) = text(&reply);
        assert!(!is_error);
        assert_eq!(serde_json::from_str::<Value>(&answer).unwrap(), expected);
        let (_, reply) = post(
            &lease.url,
            Some(lease.token()),
            call(2, "approve", json!({})),
        )
        .await;
        assert!(text(&reply).1, "tool_name is required");
    }
}

#[tokio::test]
async fn notes_are_bounded_rate_limited_and_outside_content() {
    let env = crate::test_support::env("").await;
    let outbox: crate::outbox::Outbox<()> =
        crate::outbox::Outbox::new(env.store.clone(), CancellationToken::new());
    let (b, _, _) = bridge(Some(Arc::new(outbox.clone())), true).await;
    let lease = b.open("codex", ToolContext::default(), true);
    let huge = "x".repeat(tools::MAX_NOTE_CHARS + 1);
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(1, "notify_owner", json!({"text": huge})),
    )
    .await;
    assert_eq!(
        text(&reply),
        (
            "the text is 1001 characters long; at most 1000 are accepted".into(),
            true
        )
    );
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(2, "notify_owner", json!({"text": "  "})),
    )
    .await;
    assert!(text(&reply).1);
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(3, "notify_owner", json!({"text": "half done"})),
    )
    .await;
    assert_eq!(text(&reply), ("sent".into(), false));
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(4, "notify_owner", json!({"text": "again"})),
    )
    .await;
    assert_eq!(
        text(&reply),
        ("too many notes: at most one every 10 seconds".into(), true)
    );
    assert_eq!(outbox.backlog().await.unwrap().count, 1, "one note queued");
    // A CLI reads files and web pages: its note is outside content, so a reply to it is too.
    let note = &env.store.pending_outbox(0).await.unwrap()[0];
    let delivered = crate::store::outbox::Ack {
        seq: note.seq,
        parts_done: 1,
        message_ids: vec![77],
        done: true,
        ..crate::store::outbox::Ack::default()
    };
    assert!(env.store.ack_outbox(&delivered).await.unwrap());
    assert!(env.store.carried_outside(&[77]).await.unwrap());
}

#[test]
fn the_question_shows_the_command_and_cuts_long_input() {
    let request = approval::ApprovalRequest {
        cli: "claude_code".into(),
        tool: "Bash".into(),
        input: json!({"command": "rm -rf build", "description": "clean"}),
    };
    assert_eq!(
        approval::question(&request, Locale::En),
        "claude_code asks to run Bash:\nrm -rf build\nAllow it?"
    );
    let long = approval::ApprovalRequest {
        input: json!({"command": "y".repeat(2000)}),
        ..request
    };
    let q = approval::question(&long, Locale::Zh);
    assert!(q.contains("…（共 2000 个字符）"), "{q}");
    assert!(q.chars().count() < 1600);
}

#[tokio::test]
async fn a_background_job_cannot_ask_the_owner() {
    let (b, _, asks) = bridge(None, true).await;
    let lease = b.open("claude_code", ToolContext::default(), false);
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(1, "ask_owner", json!({"question": "?"})),
    )
    .await;
    assert!(text(&reply).1, "refused");
    assert!(
        !asks.is_pending(),
        "no hidden question waits for the owner's next message"
    );
    let (_, reply) = post(
        &lease.url,
        Some(lease.token()),
        call(
            2,
            "approve",
            json!({"tool_name": "Bash", "input": {"command": "ls"}}),
        ),
    )
    .await;
    let answer: Value = serde_json::from_str(&text(&reply).0).unwrap();
    assert_eq!(answer["behavior"], "deny");
}
