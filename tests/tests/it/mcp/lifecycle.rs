//! The MCP client's lifecycle with short timings: a server that never comes back is disabled
//! (tools gone) and returns by itself later; a server that never answers hits the connect
//! timeout; a vanished HTTP server fails calls cleanly and is disabled; a slow call hits the
//! per-call timeout; a cancelled turn stops a call at once;
//! `tools/list_changed` re-lists; an unreachable server does not delay start-up, and `GetStatus`
//! shows it (and a skipped one) meanwhile.

use std::time::{Duration, Instant};

use kernel_agentd::mcp::{Mcp, McpServerStatus, McpSettings, McpState};
use kernel_agentd::tools::{ToolContext, ToolRegistry};
use serde_json::json;
use tests::config::TestConfig;
use tests::harness::Harness;
use tests::mcp_support::{
    Blackhole, HttpEverything, KillableStdio, everything_js, http_toml, process_gone, stdio_toml,
    wait_for_server,
};
use tokio_util::sync::CancellationToken;

const DEADLINE: Duration = Duration::from_secs(30);

fn fast() -> McpSettings {
    McpSettings {
        connect_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(200),
        reconnect_tries: 3,
        approval: Default::default(),
    }
}

fn ctx(cancel: CancellationToken) -> ToolContext {
    ToolContext {
        cancel,
        call_id: "call-1".into(),
        session_id: 1,
        ..ToolContext::default()
    }
}

fn state_of(status: &[McpServerStatus], name: &str) -> McpState {
    status.iter().find(|s| s.name == name).unwrap().state
}

async fn start(extra: &str, settings: McpSettings) -> (Mcp, ToolRegistry, TestConfig) {
    let cfg = TestConfig::new("http://127.0.0.1:9", extra);
    let registry = ToolRegistry::new();
    let mcp = Mcp::start(
        &cfg.load(),
        registry.clone(),
        settings,
        CancellationToken::new(),
    );
    (mcp, registry, cfg)
}

async fn wait(mcp: &Mcp, name: &str, state: McpState) {
    tokio::time::timeout(DEADLINE, mcp.wait_until(|s| state_of(s, name) == state))
        .await
        .unwrap_or_else(|_| panic!("{name} never became {state:?}: {:?}", mcp.status()));
}

fn mcp_tools(registry: &ToolRegistry) -> Vec<String> {
    registry
        .names()
        .into_iter()
        .filter(|n| n.starts_with("mcp_"))
        .collect()
}

#[tokio::test]
async fn a_server_that_never_comes_back_is_disabled_then_returns_by_itself() {
    let scratch = tempfile::tempdir().unwrap();
    let server = KillableStdio::new(scratch.path());
    let (mcp, registry, _cfg) = start(&server.toml("flaky"), fast()).await;
    wait(&mcp, "flaky", McpState::Connected).await;
    let tools = mcp_tools(&registry);
    assert!(tools.contains(&"mcp_flaky__echo".to_owned()), "{tools:?}");

    server.break_it();
    let pid = server.kill();
    wait(&mcp, "flaky", McpState::Disabled).await;
    assert!(
        mcp_tools(&registry).is_empty(),
        "disabled tools are not offered"
    );
    let status = mcp.status();
    assert_eq!(status[0].tool_count, 0);
    assert!(status[0].detail.is_some(), "{status:?}");
    assert!(process_gone(pid), "the killed server was reaped");

    server.fix();
    wait(&mcp, "flaky", McpState::Connected).await;
    assert_eq!(mcp_tools(&registry), tools, "the same tools are back");
    let out = registry
        .call(
            "mcp_flaky__echo",
            json!({"message": "hi"}),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(out.content.ends_with("Echo: hi"), "{out:?}");

    let pid = server.pid().unwrap();
    mcp.shutdown().await;
    assert!(process_gone(pid), "shutdown reaps the child");
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_connect_timeout() {
    let hole = Blackhole::start().await;
    let settings = McpSettings {
        connect_timeout: Duration::from_millis(300),
        ..fast()
    };
    let (mcp, registry, _cfg) = start(&http_toml("silent", &hole.url(), ""), settings).await;
    assert_eq!(mcp.status()[0].state, McpState::Connecting);
    wait(&mcp, "silent", McpState::Disabled).await;
    let detail = mcp.status()[0].detail.clone().unwrap();
    assert!(detail.contains("no answer within"), "{detail}");
    assert!(mcp_tools(&registry).is_empty());
    mcp.shutdown().await;
}

#[tokio::test]
async fn slow_calls_time_out_and_cancelled_calls_stop_at_once() {
    let settings = McpSettings {
        call_timeout: Duration::from_millis(500),
        ..fast()
    };
    let (mcp, registry, _cfg) = start(&stdio_toml("everything"), settings).await;
    wait(&mcp, "everything", McpState::Connected).await;
    let slow = json!({"duration": 30, "steps": 1});

    let began = Instant::now();
    let out = registry
        .call(
            "mcp_everything__trigger-long-running-operation",
            slow.clone(),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("no answer within"), "{out:?}");
    assert!(began.elapsed() < Duration::from_secs(10));

    let cancel = CancellationToken::new();
    let call = registry.call(
        "mcp_everything__trigger-long-running-operation",
        slow,
        ctx(cancel.clone()),
    );
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("a cancelled call returns at once");
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");

    // The server is still fine afterwards.
    let out = registry
        .call(
            "mcp_everything__echo",
            json!({"message": "still here"}),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(state_of(&mcp.status(), "everything"), McpState::Connected);
    mcp.shutdown().await;
}

/// A tiny MCP server (the SDK server-everything depends on) with a tool that adds another tool,
/// which makes the SDK send `notifications/tools/list_changed`.
fn growing_server(dir: &std::path::Path) -> String {
    let sdk = everything_js()
        .parent()
        .unwrap()
        .join("../../sdk/dist/esm")
        .canonicalize()
        .expect("the MCP SDK is installed with server-everything");
    let script = format!(
        r#"
import {{ McpServer }} from "file://{sdk}/server/mcp.js";
import {{ StdioServerTransport }} from "file://{sdk}/server/stdio.js";
const server = new McpServer({{ name: "growing", version: "1.0.0" }});
server.registerTool("grow", {{ description: "Adds the tool `extra`." }}, async () => {{
  server.registerTool("extra", {{ description: "Appeared later." }}, async () => ({{
    content: [{{ type: "text", text: "extra!" }}],
  }}));
  return {{ content: [{{ type: "text", text: "grown" }}] }};
}});
await server.connect(new StdioServerTransport());
"#,
        sdk = sdk.display()
    );
    let path = dir.join("growing.mjs");
    std::fs::write(&path, script).unwrap();
    format!(
        "[[mcp.servers]]\nname = \"growing\"\ntype = \"stdio\"\ncommand = \"node\"\nargs = [\"{}\"]\n",
        path.display()
    )
}

#[tokio::test]
async fn tools_list_changed_re_lists_the_tools() {
    let scratch = tempfile::tempdir().unwrap();
    let (mcp, registry, _cfg) = start(&growing_server(scratch.path()), fast()).await;
    wait(&mcp, "growing", McpState::Connected).await;
    assert_eq!(mcp_tools(&registry), ["mcp_growing__grow"]);

    let out = registry
        .call(
            "mcp_growing__grow",
            json!({}),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    tokio::time::timeout(DEADLINE, mcp.wait_until(|s| s[0].tool_count == 2))
        .await
        .expect("re-listed after tools/list_changed");
    assert_eq!(
        mcp_tools(&registry),
        ["mcp_growing__extra", "mcp_growing__grow"]
    );
    let out = registry
        .call(
            "mcp_growing__extra",
            json!({}),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(out.content.ends_with("extra!"), "{out:?}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_server_does_not_delay_start_up() {
    let hole = Blackhole::start().await;
    let extra = format!(
        "{}\n{}\n{}",
        http_toml("silent", &hole.url(), ""),
        stdio_toml("everything"),
        http_toml(
            "nokey",
            &hole.url(),
            r#""X-Key" = "${KERNEL_TEST_UNSET_KEY}""#
        ),
    );
    let fake = tests::fake_llm::FakeLlm::start().await;
    let began = Instant::now();
    let mut h = Harness::start(TestConfig::new(&fake.url(), &extra)).await;
    let status = h
        .client
        .get_status(kernel_proto::v1::GetStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "start-up took {:?}",
        began.elapsed()
    );
    let silent = status.mcp_servers.iter().find(|s| s.name == "silent");
    assert_eq!(silent.unwrap().state, "connecting", "{status:?}");
    let nokey = status
        .mcp_servers
        .iter()
        .find(|s| s.name == "nokey")
        .unwrap();
    assert_eq!(nokey.state, "skipped");
    assert!(
        nokey.detail().contains("KERNEL_TEST_UNSET_KEY"),
        "{nokey:?}"
    );

    // The other server connects meanwhile; the silent one is still waiting.
    wait_for_server(&mut h.client, "everything", "connected").await;
    assert!(began.elapsed() < Duration::from_secs(10), "not serialised");
    h.stop().await;
}

#[tokio::test]
async fn a_vanished_http_server_fails_calls_cleanly_and_ends_up_disabled() {
    let everything = HttpEverything::start().await;
    let (mcp, registry, _cfg) = start(&http_toml("remote", &everything.url(), ""), fast()).await;
    wait(&mcp, "remote", McpState::Connected).await;

    everything.stop().await;
    let out = registry
        .call(
            "mcp_remote__echo",
            json!({"message": "anyone?"}),
            ctx(CancellationToken::new()),
        )
        .await;
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("remote"), "{out:?}");

    wait(&mcp, "remote", McpState::Disabled).await;
    assert!(!registry.names().iter().any(|n| n.starts_with("mcp_remote")));
    mcp.shutdown().await;
}
