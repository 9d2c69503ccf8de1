//! An MCP server's `call_timeout_secs` and `connect_timeout_secs` are the limits actually used,
//! over the client's defaults (120 s / 10 s): a call to server-everything's long-running tool
//! answers the model with a timeout error after 1 s, and a server that never answers is reported
//! as timing out after 1 s.

use std::time::{Duration, Instant};

use kernel_agentd::mcp::{Mcp, McpServerStatus, McpSettings, McpState};
use kernel_agentd::tools::{ToolContext, ToolRegistry};
use serde_json::json;
use tests::config::TestConfig;
use tests::mcp_support::{Blackhole, http_toml, stdio_toml};
use tokio_util::sync::CancellationToken;

/// Far below the defaults and far above the configured 1 s.
const BOUND: Duration = Duration::from_secs(30);

/// `Mcp` started from `extra` with the default settings (as agentd starts it).
fn start(extra: &str) -> (Mcp, ToolRegistry, TestConfig) {
    let cfg = TestConfig::new("http://127.0.0.1:9", extra);
    let registry = ToolRegistry::new();
    let mcp = Mcp::start(
        &cfg.load(),
        registry.clone(),
        McpSettings::default(),
        CancellationToken::new(),
    );
    (mcp, registry, cfg)
}

fn server<'a>(status: &'a [McpServerStatus], name: &str) -> &'a McpServerStatus {
    status.iter().find(|s| s.name == name).expect("configured")
}

#[tokio::test]
async fn a_slow_call_hits_the_configured_call_timeout() {
    let toml = format!("{}call_timeout_secs = 1\n", stdio_toml("everything"));
    let (mcp, registry, _cfg) = start(&toml);
    tokio::time::timeout(
        BOUND,
        mcp.wait_until(|s| server(s, "everything").state == McpState::Connected),
    )
    .await
    .expect("server-everything connects");

    let began = Instant::now();
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        call_id: "call-1".into(),
        session_id: 1,
        ..ToolContext::default()
    };
    let out = tokio::time::timeout(
        BOUND,
        registry.call(
            "mcp_everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 1}),
            ctx,
        ),
    )
    .await
    .expect("the call ends on the 1 s timeout, not the 120 s default");
    assert!(began.elapsed() >= Duration::from_secs(1));
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("no answer within 1 s"), "{out:?}");
    assert_eq!(
        server(&mcp.status(), "everything").state,
        McpState::Connected
    );
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_silent_server_hits_the_configured_connect_timeout() {
    let hole = Blackhole::start().await;
    let toml = format!(
        "{}connect_timeout_secs = 1\n",
        http_toml("silent", &hole.url(), "")
    );
    let (mcp, registry, _cfg) = start(&toml);
    let began = Instant::now();
    tokio::time::timeout(
        BOUND,
        mcp.wait_until(|s| server(s, "silent").detail.is_some()),
    )
    .await
    .expect("the attempt ends on the 1 s timeout, not the 10 s default");
    assert!(began.elapsed() >= Duration::from_secs(1));
    let detail = server(&mcp.status(), "silent").detail.clone().unwrap();
    assert!(detail.contains("no answer within 1 s"), "{detail}");
    assert!(registry.names().iter().all(|n| !n.starts_with("mcp_")));
    mcp.shutdown().await;
}
