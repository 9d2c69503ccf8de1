//! The MCP client against server-everything's streamable HTTP mode: tools listed, a call works,
//! a `${VAR}` header value reaches the server (seen by a recording proxy in front of it) and never
//! a log line; a server whose variable is unset is reported as skipped.

use std::time::Duration;

use kernel_agentd::mcp::{Mcp, McpServerStatus, McpSettings, McpState};
use kernel_agentd::tools::{ToolContext, ToolRegistry};
use kernel_common::config::Component;
use serde_json::json;
use tests::config::TestConfig;
use tests::fake_llm::LogCapture;
use tests::mcp_support::{HttpEverything, RecordingProxy, http_toml};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "mcp-header-secret-0123456789";

fn ctx() -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        call_id: "call-1".into(),
        session_id: 1,
        ..ToolContext::default()
    }
}

fn server<'a>(status: &'a [McpServerStatus], name: &str) -> &'a McpServerStatus {
    status.iter().find(|s| s.name == name).unwrap()
}

#[tokio::test]
async fn http_tools_work_and_a_header_variable_reaches_the_server_but_no_log() {
    let (logs, _guard) = LogCapture::install();
    let everything = HttpEverything::start().await;
    let proxy = RecordingProxy::start(everything.port).await;
    let extra = format!(
        "{}\n{}",
        http_toml(
            "remote",
            &proxy.url(),
            r#""X-Kernel-Token" = "${KERNEL_TEST_MCP_TOKEN}""#
        ),
        http_toml(
            "nokey",
            &proxy.url(),
            r#""X-Kernel-Token" = "${KERNEL_TEST_UNSET_VAR}""#
        ),
    );
    let cfg = TestConfig::new("http://127.0.0.1:9", &extra);
    let config = kernel_common::Config::load(&cfg.path, Component::Agentd, &|k| {
        (k == "KERNEL_TEST_MCP_TOKEN").then(|| TOKEN.to_owned())
    })
    .unwrap();
    let registry = ToolRegistry::new();
    let mcp = Mcp::start(
        &config,
        registry.clone(),
        McpSettings::default(),
        CancellationToken::new(),
    );

    tokio::time::timeout(
        Duration::from_secs(30),
        mcp.wait_until(|s| server(s, "remote").state == McpState::Connected),
    )
    .await
    .expect("connected in time");
    let status = mcp.status();
    let nokey = server(&status, "nokey");
    assert_eq!(nokey.state, McpState::Skipped);
    assert!(
        nokey
            .detail
            .as_deref()
            .unwrap()
            .contains("KERNEL_TEST_UNSET_VAR"),
        "{nokey:?}"
    );
    assert!(registry.names().contains(&"mcp_remote__echo".to_owned()));
    assert!(!registry.names().iter().any(|n| n.starts_with("mcp_nokey")));

    let out = registry
        .call("mcp_remote__get-sum", json!({"a": 2, "b": 40}), ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.contains("42"), "{out:?}");
    assert!(
        out.content
            .starts_with("[external tool result from MCP server \"remote\"")
    );

    let heads = proxy.heads();
    assert!(!heads.is_empty());
    let wanted = format!("x-kernel-token: {TOKEN}");
    assert!(
        heads.iter().all(|h| h
            .to_ascii_lowercase()
            .contains(&wanted.to_ascii_lowercase())),
        "every request carries the header: {heads:#?}"
    );

    mcp.shutdown().await;
    everything.stop().await;
    let lines = logs.lines();
    assert!(
        lines.iter().any(|l| l.contains("mcp server connected")),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains(TOKEN)),
        "a header value reached the log"
    );
}
