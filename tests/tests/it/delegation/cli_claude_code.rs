//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in `tests/package.json`)
//! delegated to by the real kernel-agentd with the `[cli.claude_code]` args that
//! `config.example.toml` ships, offline against the fake LLM: the CLI's model asks for a Bash step
//! (`git init` and a redirect, which no edit rule covers) and the step runs in the workspace, in
//! Claude Code's sandbox (auto-allowed there; the machine needs `bubblewrap` and `socat`, else
//! the CLI refuses to start — `cli_sandbox` covers both cases). With `acceptEdits` alone the CLI
//! denies that same step, so the test tells the two apart.
//!
//! The fake LLM serves both models in turn: Kernel's (the `delegate_to_cli` call, then the final
//! answer) and Claude Code's (the `Bash` call, then its summary). The CLI runs with a temp `HOME`,
//! no inherited `ANTHROPIC_*`/`CLAUDE*` settings, and nonessential traffic off: its only
//! connection is to the fake.

use std::path::{Path, PathBuf};

use kernel_common::config::CliKind;
use kernel_common::config::RawConfig;
use kernel_common::config::sandbox::missing;
use serde_json::{Value, json};
use tests::chat::{completed, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, RecordedRequest, Script};
use tests::harness::unix_channel;
use tests::process::{AgentdProcess, CLAUDE_CODE_TEST_KEY};

/// Kernel's model delegates; Claude Code's model then asks for this shell step.
const BASH_STEP: &str = "git init -q && uname -s > bash_ran.txt";
/// The key Claude Code sends to the fake (its own credential, not one of Kernel's).
const CLI_SUMMARY: &str = "Initialised git and wrote bash_ran.txt.";

/// `tests/node_modules/.bin/claude`; panics with a hint when `npm ci` has not run.
fn claude() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/claude");
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` in tests/ (scripts/test does)",
        path.display()
    );
    path
}

/// The `[cli.claude_code]` args of `config.example.toml`.
fn shipped_args() -> Vec<String> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config.example.toml");
    let raw = RawConfig::parse(&std::fs::read_to_string(example).unwrap()).unwrap();
    raw.cli["claude_code"].args.clone().expect("shipped args")
}

/// What one delegation left behind.
struct Run {
    workspace: PathBuf,
    /// The requests Claude Code made (Kernel's are left out).
    cli_requests: Vec<RecordedRequest>,
    /// The `delegate_to_cli` result Kernel's model got.
    delegated: String,
    _cfg: TestConfig,
}

/// Delegates one task to the real CLI with `args` through the real agentd; Claude Code's model
/// asks for [`BASH_STEP`] when `cli_runs` (else the CLI refuses to start and never calls it).
async fn delegate_bash_step(args: &[String], cli_runs: bool) -> Run {
    let fake = FakeLlm::start().await;
    // JSON string arrays are TOML arrays too.
    let extra = format!(
        "[cli.claude_code]\ncommand = {}\nargs = {}\n",
        json!(claude().display().to_string()),
        json!(args)
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    let home = tempfile::tempdir().unwrap();
    let agentd = AgentdProcess::start_for_claude_code(&cfg.path, home.path(), &fake.url()).await;
    let mut client =
        kernel_proto::v1::agent_client::AgentClient::new(unix_channel(cfg.socket()).await);

    let task =
        "Initialise a git repository in the workspace and record the kernel name in bash_ran.txt.";
    fake.push(Script::tool_call(
        "delegate_to_cli",
        json!({ "task": task }).to_string(),
    ));
    if cli_runs {
        fake.push(Script::tool_call(
            "Bash",
            json!({"command": BASH_STEP, "description": "Initialise git, record the kernel name"})
                .to_string(),
        ));
        fake.push(Script::text(CLI_SUMMARY));
    }
    fake.push(Script::text("好了。"));
    let events = turn(&mut client, "初始化仓库").await;
    assert_eq!(completed(&events).text, "好了。", "{}", agentd.output());
    assert_eq!(fake.pending(), 0, "every script was used");

    let requests = fake.requests();
    let from_cli = |r: &RecordedRequest| {
        r.header("user-agent")
            .is_some_and(|ua| ua.starts_with("claude-cli/"))
    };
    let cli_requests: Vec<RecordedRequest> =
        requests.iter().filter(|r| from_cli(r)).cloned().collect();
    let kernel_last = requests.iter().rfind(|r| !from_cli(r)).unwrap();
    drop(agentd);
    Run {
        workspace: cfg.dir.path().to_path_buf(),
        cli_requests,
        delegated: kernel_last.raw_body.clone(),
        _cfg: cfg,
    }
}

/// The `tool_result` block Claude Code sent back for its Bash call.
fn bash_result(run: &Run) -> Value {
    let last = run
        .cli_requests
        .last()
        .expect("Claude Code called the fake");
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result in {}", last.raw_body))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shipped_args_let_claude_code_run_a_bash_step_in_the_workspace() {
    // What this machine can do decides what is asserted: without bubblewrap/socat the shipped
    // `failIfUnavailable` makes the CLI refuse to start, and nothing runs unconfined.
    let sandbox_missing = missing(CliKind::ClaudeCode);
    let run = delegate_bash_step(&shipped_args(), sandbox_missing.is_empty()).await;
    if !sandbox_missing.is_empty() {
        assert!(
            run.cli_requests.is_empty(),
            "the CLI ran without its sandbox"
        );
        assert!(!run.workspace.join("bash_ran.txt").exists());
        assert!(!run.workspace.join(".git").exists());
        assert!(
            run.delegated.to_lowercase().contains("sandbox"),
            "Kernel's model was told the sandbox is unavailable: {}",
            run.delegated
        );
        return;
    }

    assert_eq!(run.cli_requests.len(), 2, "the Bash call and the summary");
    for r in &run.cli_requests {
        assert_eq!(r.header("x-api-key"), Some(CLAUDE_CODE_TEST_KEY));
    }
    let result = bash_result(&run);
    assert_ne!(result["is_error"], true, "Bash was refused: {result}");
    let written = std::fs::read_to_string(run.workspace.join("bash_ran.txt"))
        .expect("the Bash step ran in the workspace");
    assert_eq!(written.trim(), "Linux");
    assert!(run.workspace.join(".git").is_dir(), "git init ran");
    assert!(
        run.delegated.contains(CLI_SUMMARY),
        "the CLI's answer reached Kernel's model: {}",
        run.delegated
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_edits_alone_denies_the_same_bash_step() {
    let old = [
        "-p",
        "--output-format",
        "text",
        "--permission-mode",
        "acceptEdits",
    ]
    .map(str::to_owned);
    let run = delegate_bash_step(&old, true).await;

    let result = bash_result(&run);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["content"].to_string().contains("approval"),
        "{result}"
    );
    assert!(!run.workspace.join("bash_ran.txt").exists());
    assert!(!run.workspace.join(".git").exists());
}
