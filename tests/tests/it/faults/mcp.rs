//! An MCP server killed in the middle of a call, through the real kernel-agentd binary: the
//! server is started again at once and the call is retried once on it, so the turn goes on with
//! the retried call's answer instead of waiting for the call timeout; its tools keep working; a
//! killed agentd leaves no stdio server behind; no secret is in a log or a reply. (The MCP
//! client's own lifecycle with short timings is in mcp_lifecycle.rs.)
//!
//! The server is a small one on the real MCP SDK (installed with server-everything) whose `hang`
//! tool marks that it was called and then never answers the first time, so the kill lands inside
//! the call; called again (by the retry), it answers.

use std::time::{Duration, Instant};

use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tests::chat::{completed, rest, send, turn, until};
use tests::config::TestConfig;
use tests::fake_cli::wait_stopped;
use tests::fake_llm::{FakeLlm, Script};
use tests::fault::{Agentd, Seen};
use tests::mcp_support::{everything_js, process_gone, wait_for_server};
use tests::wait::eventually;

const HANG_TOOL: &str = "mcp_flaky__hang";
const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_call_comes_back_and_the_call_is_retried_once() {
    let scratch = tempfile::tempdir().unwrap();
    let server = Flaky::new(scratch.path());
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), &server.toml());
    let mut agentd = Agentd::start(&cfg).await;
    let mut seen = Seen::default();
    seen.reply(&wait_for_server(&mut agentd.client, "flaky", "connected").await);
    let first = server.pid().expect("the server runs");

    fake.push(Script::tool_call(HANG_TOOL, "{}"));
    fake.push(Script::text("服务器重启后答复了。"));
    let mut stream = send(&mut agentd.client, "跑一个长任务").await;
    let started = until(&mut stream, |e| matches!(e, Event::ToolStarted(_))).await;
    seen.reply(&started);
    eventually("the hanging call", DEADLINE, async || server.called()).await;
    let killed_at = Instant::now();
    server.kill();

    let events = rest(&mut stream).await;
    seen.reply(&events);
    assert_eq!(completed(&events).text, "服务器重启后答复了。");
    let finished = events
        .iter()
        .find_map(|e| match e {
            Event::ToolFinished(f) => Some(f),
            _ => None,
        })
        .expect("the call finished");
    assert!(finished.ok, "{finished:?}");
    assert!(
        killed_at.elapsed() < Duration::from_secs(10),
        "the turn waited {:?} for a dead server",
        killed_at.elapsed()
    );
    let result = tool_result(&fake.requests()[1].body);
    assert_ne!(result["is_error"], true, "{result}");
    let content = result["content"].to_string();
    assert!(
        content.contains("answered after the restart"),
        "the retry on the new server answered: {content}"
    );

    // Back after the backoff: a new process, connected, and its tools answer.
    eventually("the restarted server", DEADLINE, async || {
        server.pid().is_some_and(|pid| pid != first)
    })
    .await;
    seen.reply(&wait_for_server(&mut agentd.client, "flaky", "connected").await);
    assert!(process_gone(first), "the killed server was reaped");

    fake.push(Script::tool_call("mcp_flaky__echo", "{}"));
    fake.push(Script::text("它回来了。"));
    let events = turn(&mut agentd.client, "再试一次").await;
    seen.reply(&events);
    assert_eq!(completed(&events).text, "它回来了。");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolFinished(f) if f.ok)),
        "{events:?}"
    );
    let echoed = fake.last_request().unwrap().raw_body;
    assert!(echoed.contains("echo from the new server"), "{echoed}");

    // A crashed agentd leaves no stdio server behind: it ends with its closed stdin.
    let second = server.pid().expect("the server runs");
    seen.text(agentd.kill9());
    assert!(
        wait_stopped(second, DEADLINE).await,
        "the MCP server outlived agentd"
    );
    seen.assert_no_secrets(&cfg.data_dir());
}

/// The first tool result block of an Anthropic request body.
fn tool_result(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .expect("a tool_result in the request")
}

/// The `flaky` stdio server: a shell wrapper that records the pid and `exec`s node on a script
/// with two tools, `hang` (touches `called`, never answers) and `echo`.
struct Flaky {
    dir: std::path::PathBuf,
}

impl Flaky {
    fn new(dir: &std::path::Path) -> Flaky {
        use std::os::unix::fs::PermissionsExt as _;
        let sdk = everything_js()
            .parent()
            .unwrap()
            .join("../../sdk/dist/esm")
            .canonicalize()
            .expect("the MCP SDK is installed with server-everything");
        let called = dir.join("called");
        let script = format!(
            r#"
import {{ existsSync, writeFileSync }} from "node:fs";
import {{ McpServer }} from "file://{sdk}/server/mcp.js";
import {{ StdioServerTransport }} from "file://{sdk}/server/stdio.js";
const server = new McpServer({{ name: "flaky", version: "1.0.0" }});
server.registerTool("hang", {{ description: "Never answers the first time." }}, async () => {{
  if (existsSync({called:?})) {{
    return {{ content: [{{ type: "text", text: "answered after the restart" }}] }};
  }}
  writeFileSync({called:?}, "yes");
  return new Promise(() => {{}});
}});
server.registerTool("echo", {{ description: "Answers." }}, async () => ({{
  content: [{{ type: "text", text: "echo from the new server" }}],
}}));
await server.connect(new StdioServerTransport());
"#,
            sdk = sdk.display(),
            called = called.display().to_string(),
        );
        std::fs::write(dir.join("flaky.mjs"), script).unwrap();
        let wrapper = dir.join("flaky.sh");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho $$ > '{}'\nexec node '{}'\n",
                dir.join("pid").display(),
                dir.join("flaky.mjs").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Flaky {
            dir: dir.to_path_buf(),
        }
    }

    fn toml(&self) -> String {
        format!(
            "[[mcp.servers]]\nname = \"flaky\"\ntype = \"stdio\"\ncommand = {:?}\n",
            self.dir.join("flaky.sh").display().to_string()
        )
    }

    fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.dir.join("pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn called(&self) -> bool {
        self.dir.join("called").exists()
    }

    /// SIGKILLs the running server.
    fn kill(&self) {
        let pid = self.pid().expect("the server runs");
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}
