//! What Kernel says about an MCP server it cannot reach: `GetStatus` names where and what failed
//! in a few words ("127.0.0.1:PORT: connection refused", "HTTP 401 Unauthorized", "HTTP 503"),
//! never rmcp's type chain nor the server's error body; and the real kernel-agentd logs an
//! unreachable server at WARN once per change of its state, with no ERROR line for the retries.

use std::time::{Duration, Instant};

use axum::http::{HeaderName, StatusCode};
use kernel_agentd::mcp::{Mcp, McpServerStatus, McpSettings, McpState};
use kernel_agentd::tools::ToolRegistry;
use tests::config::TestConfig;
use tests::harness::unix_channel;
use tests::mcp_support::{free_port, http_toml, wait_for_server};
use tests::process::AgentdProcess;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const DEADLINE: Duration = Duration::from_secs(30);
/// In the error bodies the fake servers send; never shown.
const BODY_MARKER: &str = "body-detail-never-shown";

/// An HTTP server on 127.0.0.1 that answers every request with `status` (plus `headers`) and a
/// JSON body that is not JSON-RPC.
struct Answering {
    port: u16,
    task: JoinHandle<()>,
}

impl Answering {
    async fn start(status: u16, headers: &[(&'static str, &'static str)]) -> Answering {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let headers: Vec<(HeaderName, String)> = headers
            .iter()
            .map(|(k, v)| (HeaderName::from_static(k), (*v).to_owned()))
            .collect();
        let app = axum::Router::new().fallback(move || {
            let headers = headers.clone();
            async move {
                let mut response = axum::response::Response::new(axum::body::Body::from(format!(
                    r#"{{"error":"{BODY_MARKER}"}}"#
                )));
                *response.status_mut() = StatusCode::from_u16(status).unwrap();
                let h = response.headers_mut();
                h.insert("content-type", "application/json".parse().unwrap());
                for (name, value) in headers {
                    h.insert(name, value.parse().unwrap());
                }
                response
            }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Answering { port, task }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn settings() -> McpSettings {
    McpSettings {
        connect_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(200),
        reconnect_tries: 3,
        approval: Default::default(),
    }
}

fn detail(status: &[McpServerStatus], name: &str) -> Option<String> {
    status
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.detail.clone())
}

#[tokio::test]
async fn status_says_where_and_what_failed_in_words() {
    let refused = free_port().await;
    let unauthorised = Answering::start(401, &[]).await;
    let challenged = Answering::start(401, &[("www-authenticate", "Bearer realm=\"mcp\"")]).await;
    let unavailable = Answering::start(503, &[]).await;
    let extra = [
        http_toml("refused", &format!("http://127.0.0.1:{refused}/mcp"), ""),
        http_toml("unauthorised", &unauthorised.url(), ""),
        http_toml("challenged", &challenged.url(), ""),
        http_toml("unavailable", &unavailable.url(), ""),
    ]
    .join("\n");
    let cfg = TestConfig::new("http://127.0.0.1:9", &extra);
    let mcp = Mcp::start(
        &cfg.load(),
        ToolRegistry::new(),
        settings(),
        CancellationToken::new(),
    );
    tokio::time::timeout(
        DEADLINE,
        mcp.wait_until(|s| s.iter().all(|s| s.state == McpState::Disabled)),
    )
    .await
    .expect("every server is given up on");

    let status = mcp.status();
    let expected = [
        (
            "refused",
            format!("127.0.0.1:{refused}: connection refused"),
        ),
        (
            "unauthorised",
            format!("127.0.0.1:{}: HTTP 401 Unauthorized", unauthorised.port),
        ),
        (
            "challenged",
            format!(
                "127.0.0.1:{}: HTTP 401 (authorisation required)",
                challenged.port
            ),
        ),
        (
            "unavailable",
            format!("127.0.0.1:{}: HTTP 503", unavailable.port),
        ),
    ];
    for (name, said) in expected {
        assert_eq!(
            detail(&status, name).as_deref(),
            Some(said.as_str()),
            "{status:?}"
        );
    }
    let all = format!("{status:?}");
    for never in ["rmcp", "Transport", "reqwest", BODY_MARKER] {
        assert!(!all.contains(never), "{never} in {all}");
    }
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_agentd_warns_once_about_an_unreachable_server_and_never_errors() {
    let refused = free_port().await;
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &http_toml("offline", &format!("http://127.0.0.1:{refused}/mcp"), ""),
    );
    let path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || {
        // Debug for the MCP client only: each failed attempt shows, so the test can count them.
        AgentdProcess::start(&path, &[("RUST_LOG", "info,kernel_agentd::mcp=debug")])
    })
    .await
    .unwrap();
    let mut client =
        kernel_proto::v1::agent_client::AgentClient::new(unix_channel(cfg.socket()).await);

    // Three attempts (the default backoff: 1 s, then 2 s) while it stays "connecting".
    let until = Instant::now() + DEADLINE;
    while attempts(&agentd.output()) < 3 {
        assert!(Instant::now() < until, "{}", agentd.output());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = wait_for_server(&mut client, "offline", "connecting").await;
    assert_eq!(
        status.detail(),
        format!("127.0.0.1:{refused}: connection refused")
    );

    let output = agentd.output();
    let warned: Vec<&str> = output
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains("offline"))
        .collect();
    assert_eq!(warned.len(), 1, "one WARN for the state change: {output}");
    assert!(warned[0].contains("connection refused"), "{}", warned[0]);
    assert!(
        !output.lines().any(|l| l.contains(" ERROR ")),
        "no ERROR line for an unreachable server: {output}"
    );
    // rmcp's type chain only ever at DEBUG (the full error, for a developer).
    assert!(
        !output
            .lines()
            .any(|l| l.contains("WorkerTransport") && !l.contains(" DEBUG ")),
        "{output}"
    );
    drop(agentd);
}

/// How many failed connection attempts agentd logged.
fn attempts(output: &str) -> usize {
    output
        .lines()
        .filter(|l| {
            l.contains("offline")
                && (l.contains("mcp connect attempt failed") || l.contains("failed to connect"))
        })
        .count()
}
