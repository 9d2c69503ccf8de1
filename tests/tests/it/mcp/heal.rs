//! MCP calls that heal: a call that loses its connection is retried once on the reconnected
//! server (and only once); a call that times out sends the server to reconnect, is not retried,
//! and returns once the fresh connection is up; a call made right after the server died is
//! answered by the restarted one.
//!
//! The server is a small one on the real MCP SDK (installed with server-everything): every start
//! appends its pid to `starts`, every tool call its name to `calls`; `crash_once` exits the first
//! time it is called and answers afterwards, `always_crash` always exits, `hang` never answers.

use std::path::PathBuf;
use std::time::Duration;

use kernel_agentd::mcp::{Mcp, McpServerStatus, McpSettings, McpState};
use kernel_agentd::tools::{ToolContext, ToolOutput, ToolRegistry};
use serde_json::json;
use tests::config::TestConfig;
use tests::mcp_support::{everything_js, process_gone};
use tokio_util::sync::CancellationToken;

const DEADLINE: Duration = Duration::from_secs(30);

/// The `healing` stdio server in a scratch folder.
struct Healing {
    dir: tempfile::TempDir,
}

impl Healing {
    fn new() -> Healing {
        let dir = tempfile::tempdir().unwrap();
        let sdk = everything_js()
            .parent()
            .unwrap()
            .join("../../sdk/dist/esm")
            .canonicalize()
            .expect("the MCP SDK is installed with server-everything");
        let file = |name: &str| dir.path().join(name).display().to_string();
        let script = format!(
            r#"
import {{ appendFileSync, existsSync, writeFileSync }} from "node:fs";
import {{ McpServer }} from "file://{sdk}/server/mcp.js";
import {{ StdioServerTransport }} from "file://{sdk}/server/stdio.js";
appendFileSync({starts:?}, `${{process.pid}}\n`);
const called = (name) => appendFileSync({calls:?}, `${{name}}\n`);
const server = new McpServer({{ name: "healing", version: "1.0.0" }});
server.registerTool("crash_once", {{ description: "Exits the first time." }}, async () => {{
  called("crash_once");
  if (!existsSync({crashed:?})) {{
    writeFileSync({crashed:?}, "yes");
    process.exit(1);
  }}
  return {{ content: [{{ type: "text", text: `answered by ${{process.pid}}` }}] }};
}});
server.registerTool("always_crash", {{ description: "Always exits." }}, async () => {{
  called("always_crash");
  process.exit(1);
}});
server.registerTool("hang", {{ description: "Never answers." }}, async () => {{
  called("hang");
  return new Promise(() => {{}});
}});
await server.connect(new StdioServerTransport());
"#,
            sdk = sdk.display(),
            starts = file("starts"),
            calls = file("calls"),
            crashed = file("crashed"),
        );
        std::fs::write(dir.path().join("healing.mjs"), script).unwrap();
        Healing { dir }
    }

    fn toml(&self, call_timeout_secs: u64) -> String {
        format!(
            "[[mcp.servers]]\nname = \"healing\"\ntype = \"stdio\"\ncommand = \"node\"\nargs = [{:?}]\ncall_timeout_secs = {call_timeout_secs}\n",
            self.path("healing.mjs").display().to_string()
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The pids of every server started so far, in order.
    fn starts(&self) -> Vec<i32> {
        self.lines("starts")
            .iter()
            .map(|l| l.parse().unwrap())
            .collect()
    }

    /// How often `tool` was called, over every server.
    fn calls(&self, tool: &str) -> usize {
        self.lines("calls").iter().filter(|l| *l == tool).count()
    }
}

/// Short backoff; the call timeout comes from the server's own `call_timeout_secs`.
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

fn ctx() -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        call_id: "call-1".into(),
        session_id: 1,
        ..ToolContext::default()
    }
}

fn state(status: &[McpServerStatus]) -> McpState {
    status[0].state
}

async fn start(server: &Healing, call_timeout_secs: u64) -> (Mcp, ToolRegistry, TestConfig) {
    let cfg = TestConfig::new("http://127.0.0.1:9", &server.toml(call_timeout_secs));
    let registry = ToolRegistry::new();
    let mcp = Mcp::start(
        &cfg.load(),
        registry.clone(),
        settings(),
        CancellationToken::new(),
    );
    tokio::time::timeout(
        DEADLINE,
        mcp.wait_until(|s| state(s) == McpState::Connected),
    )
    .await
    .expect("the healing server connects");
    (mcp, registry, cfg)
}

async fn call(registry: &ToolRegistry, tool: &str) -> ToolOutput {
    tokio::time::timeout(DEADLINE, registry.call(tool, json!({}), ctx()))
        .await
        .unwrap_or_else(|_| panic!("{tool} returned in time"))
}

#[tokio::test]
async fn a_call_that_loses_its_connection_is_retried_once_on_the_new_one() {
    let server = Healing::new();
    let (mcp, registry, _cfg) = start(&server, 10).await;

    let out = call(&registry, "mcp_healing__crash_once").await;

    assert!(!out.is_error, "{out:?}");
    let starts = server.starts();
    assert_eq!(starts.len(), 2, "restarted once: {starts:?}");
    assert!(
        out.content.ends_with(&format!("answered by {}", starts[1])),
        "the new server answered: {out:?}"
    );
    assert_eq!(server.calls("crash_once"), 2, "the call and one retry");
    assert_eq!(state(&mcp.status()), McpState::Connected);
    assert!(process_gone(starts[0]), "the crashed server was reaped");
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_call_that_fails_again_after_the_retry_is_an_error() {
    let server = Healing::new();
    let (mcp, registry, _cfg) = start(&server, 10).await;

    let out = call(&registry, "mcp_healing__always_crash").await;

    assert!(out.is_error, "{out:?}");
    assert!(
        out.content.contains("healing") && out.content.contains("failed: the connection closed"),
        "{out:?}"
    );
    assert_eq!(server.calls("always_crash"), 2, "retried once, not more");
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_timed_out_call_reconnects_the_server_and_is_not_retried() {
    let server = Healing::new();
    let (mcp, registry, _cfg) = start(&server, 1).await;
    let first = server.starts()[0];

    let out = call(&registry, "mcp_healing__hang").await;

    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("no answer within 1 s"), "{out:?}");
    assert_eq!(server.calls("hang"), 1, "a timed-out call is not repeated");
    let starts = server.starts();
    assert_eq!(
        starts.len(),
        2,
        "a fresh server after the timeout: {starts:?}"
    );
    assert_eq!(
        state(&mcp.status()),
        McpState::Connected,
        "the call returned once the fresh connection was up"
    );
    assert!(process_gone(first), "the stuck server was ended and reaped");

    // The next call uses the fresh connection at once.
    let out = call(&registry, "mcp_healing__crash_once").await;
    assert!(!out.is_error, "{out:?}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_call_right_after_the_server_died_is_answered_by_the_restarted_one() {
    let server = Healing::new();
    let (mcp, registry, _cfg) = start(&server, 10).await;
    // crash_once has crashed before: from now on it answers.
    std::fs::write(server.path("crashed"), "yes").unwrap();
    let first = server.starts()[0];
    kill(first);

    let out = call(&registry, "mcp_healing__crash_once").await;

    assert!(!out.is_error, "{out:?}");
    let starts = server.starts();
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert!(
        out.content.ends_with(&format!("answered by {}", starts[1])),
        "{out:?}"
    );
    mcp.shutdown().await;
}

fn kill(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
