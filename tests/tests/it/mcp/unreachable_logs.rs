//! An MCP server that stays unreachable is logged at WARN once per change of its state (failing
//! to connect, then disabled), in words, however often it is retried; the retries themselves
//! are DEBUG. (rmcp's own ERROR per failed attempt comes from `rmcp::transport::worker`, which
//! the binaries' log filter turns off; kernel-common's logging tests prove that.)
//!
//! The capture sees every test's lines (one process): the assertions look only at lines that
//! name this test's server.

use std::time::Duration;

use kernel_agentd::mcp::{Mcp, McpSettings, McpState};
use kernel_agentd::tools::ToolRegistry;
use tests::config::TestConfig;
use tests::fake_llm::LogCapture;
use tests::mcp_support::{free_port, http_toml};
use tests::wait::eventually;
use tokio_util::sync::CancellationToken;
use tracing::Level;

#[tokio::test]
async fn an_unreachable_server_is_warned_about_once_per_state() {
    let (logs, _guard) = LogCapture::install();
    let port = free_port().await;
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &http_toml("offline", &format!("http://127.0.0.1:{port}/mcp"), ""),
    );
    let settings = McpSettings {
        connect_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        backoff_initial: Duration::from_millis(10),
        backoff_max: Duration::from_millis(50),
        reconnect_tries: 3,
        approval: Default::default(),
    };
    let mcp = Mcp::start(
        &cfg.load(),
        ToolRegistry::new(),
        settings,
        CancellationToken::new(),
    );
    let ours = |level: Level| -> Vec<String> {
        logs.lines_at(level)
            .into_iter()
            .filter(|l| l.starts_with("kernel_agentd") && l.contains("offline"))
            .collect()
    };

    // Disabled after 3 attempts, then retried at the slow rate: wait for 5 more.
    tokio::time::timeout(
        Duration::from_secs(30),
        mcp.wait_until(|s| s[0].state == McpState::Disabled),
    )
    .await
    .expect("disabled");
    eventually(
        "7 failed connect attempts",
        Duration::from_secs(30),
        async || {
            ours(Level::DEBUG)
                .iter()
                .filter(|l| l.contains("mcp connect attempt failed"))
                .count()
                >= 7
        },
    )
    .await;

    let warned = ours(Level::WARN);
    assert_eq!(warned.len(), 2, "{warned:#?}");
    assert!(warned[0].contains("failed to connect"), "{warned:#?}");
    assert!(warned[1].contains("its tools are disabled"), "{warned:#?}");
    let reason = format!("127.0.0.1:{port}: connection refused");
    for line in &warned {
        assert!(line.contains(&reason), "{line}");
        assert!(
            !line.contains("rmcp") && !line.contains("Transport"),
            "{line}"
        );
    }
    let errors: Vec<String> = logs
        .lines_at(Level::ERROR)
        .into_iter()
        .filter(|l| !l.starts_with("rmcp::transport::worker"))
        .filter(|l| l.contains("offline") || l.contains(&format!(":{port}")))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    mcp.shutdown().await;
}
