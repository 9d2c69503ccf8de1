//! Sandboxed delegation with the args `config.example.toml` ships, tested with the real npm CLIs
//! (pinned in `tests/package.json`) offline against the fake LLM: Codex (`--sandbox
//! workspace-write`, its model on the fake's Responses endpoint) and Claude Code (its `sandbox`
//! settings: bubblewrap + socat on Linux) each run a shell step that writes one file in the
//! workspace and one outside it; only the first is written. Where this machine cannot run a
//! CLI's sandbox, the test asserts instead that `--check` and `GetStatus` say so (and that
//! nothing was written outside). `--check`, `GetStatus` and the bot's `/status` name which
//! delegations run sandboxed.

use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_common::config::sandbox::missing;
use kernel_common::config::{CliKind, RawConfig};
use kernel_proto::v1 as pb;
use serde_json::json;
use tests::chat::{completed, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, RecordedRequest, Script};
use tests::harness::unix_channel;
use tests::process::{AgentdProcess, bin_path};

/// The key Codex sends to the fake (its own provider's, read from this variable).
const CODEX_KEY: &str = "sk-codex-test-key-0123456789";

fn node_bin(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` in tests/ (scripts/test does)",
        path.display()
    );
    path
}

/// The `[cli.<name>]` args of `config.example.toml`.
fn shipped_args(cli: &str) -> Vec<String> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config.example.toml");
    let raw = RawConfig::parse(&std::fs::read_to_string(example).unwrap()).unwrap();
    raw.cli[cli].args.clone().expect("shipped args")
}

/// `kernel-agentd --check` on `cfg`.
fn check(cfg: &TestConfig) -> String {
    let out = Command::new(bin_path("kernel-agentd"))
        .arg("--config")
        .arg(&cfg.path)
        .arg("--check")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The `--check` line under `cli`'s command line.
fn check_line(text: &str, cli: &str) -> String {
    let mut lines = text.lines();
    lines
        .find(|l| l.trim_start().starts_with(&format!("{cli}: ")))
        .unwrap_or_else(|| panic!("no {cli} in {text}"));
    lines.next().unwrap().trim().to_owned()
}

async fn sandboxes(cfg: &TestConfig) -> Vec<pb::CliSandbox> {
    let mut client = pb::agent_client::AgentClient::new(unix_channel(cfg.socket()).await);
    client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
        .cli_sandboxes
}

/// One delegation through the real agentd whose CLI's model runs `step` (a shell command) and
/// then answers. What it left behind.
struct Run {
    workspace: PathBuf,
    outside: tempfile::TempDir,
    cli_requests: Vec<RecordedRequest>,
    status: Vec<pb::CliSandbox>,
    check: String,
    _cfg: TestConfig,
}

/// The shell step: one file in the workspace, one in `outside`.
fn step(outside: &Path) -> String {
    format!(
        "echo in > inside.txt; echo out > {}/escaped.txt; echo step-finished",
        outside.display()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_with_the_shipped_args_writes_only_in_the_workspace() {
    let fake = FakeLlm::start().await;
    let provider = format!(
        "model_providers.fake={{name=\"fake\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"CODEX_FAKE_KEY\"}}",
        fake.url()
    );
    let mut args = shipped_args("codex");
    args.extend(
        [
            "-c",
            &provider,
            "-c",
            "model_provider=\"fake\"",
            "-m",
            "fake-model",
        ]
        .map(str::to_owned),
    );
    let extra = format!(
        "[cli.codex]\ncommand = {}\nargs = {}\n",
        json!(node_bin("codex").display().to_string()),
        json!(args)
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    // Codex refuses to set up its sandbox helpers under a temporary folder: its home lives in
    // target/tmp (as ~/.codex would), the workspace and the outside folder in /tmp.
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let check = check(&cfg);
    let owned: Vec<(&str, String)> = vec![
        ("HOME", home.path().display().to_string()),
        ("CODEX_HOME", home.path().display().to_string()),
        ("CODEX_FAKE_KEY", CODEX_KEY.to_owned()),
    ];
    let config_path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        AgentdProcess::start_without(&config_path, &["OPENAI_", "CODEX"], &env)
    })
    .await
    .unwrap();
    let status = sandboxes(&cfg).await;
    let mut client = pb::agent_client::AgentClient::new(unix_channel(cfg.socket()).await);
    fake.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": "Write the two files.", "cli": "codex"}).to_string(),
    ));
    fake.push(Script::tool_call(
        "exec_command",
        json!({"cmd": step(outside.path())}).to_string(),
    ));
    fake.push(Script::text("Wrote what I could."));
    fake.push(Script::text("好了。"));
    let events = turn(&mut client, "写两个文件").await;
    assert_eq!(completed(&events).text, "好了。", "{}", agentd.output());
    let cli_requests: Vec<RecordedRequest> = fake
        .requests()
        .into_iter()
        .filter(|r| r.http.path == "/v1/responses")
        .collect();
    drop(agentd);
    let run = Run {
        workspace: cfg.dir.path().to_path_buf(),
        outside,
        cli_requests,
        status,
        check,
        _cfg: cfg,
    };

    let codex = run.status.iter().find(|s| s.cli == "codex").unwrap();
    assert!(
        !run.outside.path().join("escaped.txt").exists(),
        "wrote outside the workspace"
    );
    if missing(CliKind::Codex).is_empty() {
        assert_eq!(codex.state(), pb::CliSandboxState::Sandboxed, "{codex:?}");
        assert!(codex.workspace_writes && !codex.tmp_writes && !codex.network);
        assert_eq!(
            check_line(&run.check, "codex"),
            "sandboxed (writes: workspace; network: off)"
        );
        assert_eq!(run.cli_requests.len(), 2, "the shell step and the answer");
        for r in &run.cli_requests {
            assert_eq!(
                r.header("authorization"),
                Some(format!("Bearer {CODEX_KEY}").as_str())
            );
        }
        let output = run.cli_requests[1].body["input"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|i| i["type"] == "function_call_output")
            .unwrap()["output"]
            .to_string();
        assert!(output.contains("step-finished"), "the step ran: {output}");
        assert!(output.contains("Read-only file system"), "{output}");
        // Kernel's MCP server reached Codex through `-c mcp_servers.kernel.*` and its token.
        let tools = run.cli_requests[0].body["tools"].to_string();
        assert!(
            tools.contains("ask_owner") && tools.contains("notify_owner"),
            "{tools}"
        );
        let inside = std::fs::read_to_string(run.workspace.join("inside.txt"))
            .expect("the step wrote in the workspace");
        assert_eq!(inside.trim(), "in");
    } else {
        assert_eq!(codex.state(), pb::CliSandboxState::Unavailable, "{codex:?}");
        assert!(
            check_line(&run.check, "codex").contains("unavailable here"),
            "{}",
            run.check
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_with_the_shipped_args_writes_only_in_the_workspace() {
    let fake = FakeLlm::start().await;
    let extra = format!(
        "[cli.claude_code]\ncommand = {}\nargs = {}\n",
        json!(node_bin("claude").display().to_string()),
        json!(shipped_args("claude_code"))
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let check = check(&cfg);
    let agentd = AgentdProcess::start_for_claude_code(&cfg.path, home.path(), &fake.url()).await;
    let status = sandboxes(&cfg).await;
    let sandbox = status
        .iter()
        .find(|s| s.cli == "claude_code")
        .unwrap()
        .clone();
    let mut client = pb::agent_client::AgentClient::new(unix_channel(cfg.socket()).await);
    fake.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": "Write the two files."}).to_string(),
    ));
    let runs = missing(CliKind::ClaudeCode).is_empty();
    if runs {
        fake.push(Script::tool_call(
            "Bash",
            json!({"command": step(outside.path()), "description": "Write two files"}).to_string(),
        ));
        fake.push(Script::text("Wrote what I could."));
    }
    fake.push(Script::text("好了。"));
    let events = turn(&mut client, "写两个文件").await;
    assert_eq!(completed(&events).text, "好了。", "{}", agentd.output());
    let from_cli = |r: &RecordedRequest| {
        r.header("user-agent")
            .is_some_and(|ua| ua.starts_with("claude-cli/"))
    };
    let cli_requests: Vec<RecordedRequest> = fake
        .requests()
        .into_iter()
        .filter(|r| from_cli(r))
        .collect();
    drop(agentd);

    assert!(
        !outside.path().join("escaped.txt").exists(),
        "wrote outside the workspace"
    );
    if runs {
        assert_eq!(
            sandbox.state(),
            pb::CliSandboxState::Sandboxed,
            "{sandbox:?}"
        );
        assert_eq!(
            check_line(&check, "claude_code"),
            "sandboxed (writes: workspace; network: off)"
        );
        assert_eq!(cli_requests.len(), 2, "the Bash call and the summary");
        let last = cli_requests.last().unwrap();
        assert!(
            last.raw_body.contains("step-finished"),
            "the step ran: {}",
            last.raw_body
        );
        let inside = std::fs::read_to_string(cfg.dir.path().join("inside.txt"))
            .expect("the step wrote in the workspace");
        assert_eq!(inside.trim(), "in");
    } else {
        // failIfUnavailable: the CLI refuses to start; nothing ran unconfined.
        assert_eq!(
            sandbox.state(),
            pb::CliSandboxState::Unavailable,
            "{sandbox:?}"
        );
        assert!(
            check_line(&check, "claude_code").contains("unavailable here"),
            "{check}"
        );
        assert!(!cfg.dir.path().join("inside.txt").exists());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn check_and_status_say_which_delegations_run_sandboxed() {
    let bypass = ["exec", "--dangerously-bypass-approvals-and-sandbox"];
    let extra = format!(
        "[cli.codex]\ncommand = \"codex\"\nargs = {}\n\n[cli.codex_yolo]\ncommand = \"codex\"\nargs = {}\n\n[cli.aider]\ncommand = \"aider\"\nargs = []\n",
        json!(shipped_args("codex")),
        json!(bypass)
    );
    let cfg = TestConfig::new("http://127.0.0.1:9", &extra);
    let text = check(&cfg);
    assert_eq!(
        check_line(&text, "codex_yolo"),
        "NOT sandboxed (--dangerously-bypass-approvals-and-sandbox)"
    );
    assert!(
        check_line(&text, "aider").starts_with("sandbox unknown"),
        "{text}"
    );
    let codex = check_line(&text, "codex");
    assert!(
        codex == "sandboxed (writes: workspace; network: off)"
            || codex.contains("unavailable here"),
        "{codex}"
    );

    let config_path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&config_path, &[]))
        .await
        .unwrap();
    let status = sandboxes(&cfg).await;
    let by_name = |name: &str| status.iter().find(|s| s.cli == name).unwrap().clone();
    let yolo = by_name("codex_yolo");
    assert_eq!(yolo.state(), pb::CliSandboxState::Off);
    assert_eq!(yolo.detail, "--dangerously-bypass-approvals-and-sandbox");
    assert_eq!(by_name("aider").state(), pb::CliSandboxState::Unknown);
    assert_ne!(by_name("codex").state(), pb::CliSandboxState::Off);
    assert!(
        agentd
            .output()
            .contains("NOT sandboxed (--dangerously-bypass-approvals-and-sandbox)"),
        "a WARN at start: {}",
        agentd.output()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_status_says_which_delegations_run_sandboxed() {
    let extra = format!(
        "[cli.codex]\ncommand = \"codex\"\nargs = {}\n\n[cli.codex_yolo]\ncommand = \"codex\"\nargs = {}\n",
        json!(shipped_args("codex")),
        json!(["exec", "--dangerously-bypass-approvals-and-sandbox"])
    );
    let stack = tests::stack::Stack::start_with("claude", &extra).await;
    let status = stack.command("/status").await;
    assert!(
        status.contains(
            "<code>codex_yolo</code> ⚠️ 无沙箱，命令不受限制（--dangerously-bypass-approvals-and-sandbox）"
        ),
        "{status}"
    );
    let codex = if missing(CliKind::Codex).is_empty() {
        "<code>codex</code> 🔒 沙箱（仅工作区可写，不联网）"
    } else {
        "<code>codex</code> ⛔ 已配置沙箱，但本机无法运行"
    };
    assert!(status.contains(codex), "{status}");
}
