//! Kernel as an MCP server for the real Claude Code CLI it delegates to (the shipped
//! `[cli.claude_code]` args, offline against the fake LLM): the CLI's model calls
//! `mcp__kernel__ask_owner` and gets the option the owner picked; a Bash command that asks to
//! leave the sandbox (which the CLI may not run on its own) goes through
//! `--permission-prompt-tool mcp__kernel__approve` to the owner as an Allow/Deny question: Allow →
//! it ran (its file exists), Deny → it did not. The real Codex CLI (shipped args, its model on
//! the fake's Responses endpoint) reaches the same `ask_owner` through its `mcp_servers` config.
//! The owner answers over gRPC (`Answer`), as kernel-tg's buttons do.

use std::path::{Path, PathBuf};

use kernel_common::config::sandbox::missing;
use kernel_common::config::{CliKind, RawConfig};
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use serde_json::json;
use tests::chat::{rest, send, until};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, RecordedRequest, Script};
use tests::harness::unix_channel;
use tests::process::AgentdProcess;

fn claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/claude")
}

fn shipped_args() -> Vec<String> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config.example.toml");
    let raw = RawConfig::parse(&std::fs::read_to_string(example).unwrap()).unwrap();
    raw.cli["claude_code"].args.clone().expect("shipped args")
}

struct Delegation {
    fake: FakeLlm,
    cfg: TestConfig,
    agentd: AgentdProcess,
    _home: tempfile::TempDir,
}

/// The real agentd with the real Claude Code and the shipped args.
async fn start() -> Delegation {
    let fake = FakeLlm::start().await;
    let extra = format!(
        "[cli.claude_code]\ncommand = {}\nargs = {}\n",
        json!(claude().display().to_string()),
        json!(shipped_args())
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    let home = tempfile::tempdir().unwrap();
    let agentd = AgentdProcess::start_for_claude_code(&cfg.path, home.path(), &fake.url()).await;
    Delegation {
        fake,
        cfg,
        agentd,
        _home: home,
    }
}

async fn client(d: &Delegation) -> pb::agent_client::AgentClient<tonic::transport::Channel> {
    pb::agent_client::AgentClient::new(unix_channel(d.cfg.socket()).await)
}

/// Every process's command line (`/proc/<pid>/cmdline`), as its arguments.
fn command_lines() -> Vec<Vec<String>> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|raw| {
            raw.split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .collect()
}

/// While Claude Code runs a delegation: its bridge token is in a private `--mcp-config` file
/// (a `kernel-run-*` directory of the temp dir; Node rewrites its own command line, so the file
/// is found there, not through the argv) and on no process's command line.
fn no_token_on_any_command_line() {
    let files: Vec<PathBuf> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("kernel-run-"))
        .map(|e| e.path().join("mcp-config.json"))
        .filter(|p| p.exists())
        .collect();
    assert!(
        !files.is_empty(),
        "a running delegation's --mcp-config file"
    );
    let lines = command_lines();
    for file in files {
        // Another test's delegation may have ended meanwhile.
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let config: serde_json::Value = serde_json::from_str(&text).unwrap();
        let auth = config["mcpServers"]["kernel"]["headers"]["Authorization"]
            .as_str()
            .unwrap();
        let token = auth.strip_prefix("Bearer ").unwrap();
        for argv in &lines {
            assert!(
                argv.iter().all(|a| !a.contains(token)),
                "the bridge token on a command line: {argv:?}"
            );
        }
    }
}

fn from_cli(r: &RecordedRequest) -> bool {
    r.header("user-agent")
        .is_some_and(|ua| ua.starts_with("claude-cli/"))
}

/// Runs one turn that delegates; the CLI's model makes `call`; the owner answers the question it
/// raises with `option`. The question and the CLI's request after the answer.
async fn delegate_and_answer(
    d: &Delegation,
    call: Script,
    option: u32,
) -> (pb::Question, RecordedRequest, Vec<Event>) {
    d.fake.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": "Do the step."}).to_string(),
    ));
    d.fake.push(call);
    d.fake.push(Script::text("Step handled."));
    d.fake.push(Script::text("好了。"));
    let mut chat = client(d).await;
    let mut stream = send(&mut chat, "做这一步").await;
    let Event::Question(question) = until(&mut stream, |e| matches!(e, Event::Question(_))).await
    else {
        unreachable!()
    };
    no_token_on_any_command_line();
    let answered = client(d)
        .await
        .answer(pb::AnswerRequest {
            question_id: question.question_id.clone(),
            option: Some(option),
            text: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(answered.accepted);
    let events = rest(&mut stream).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Completed(c) if c.text == "好了。")),
        "{events:?}\n{}",
        d.agentd.output()
    );
    let after = d
        .fake
        .requests()
        .into_iter()
        .filter(from_cli)
        .last()
        .expect("Claude Code called the fake");
    (question, after, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_asks_the_owner_and_gets_the_pressed_option() {
    if !missing(CliKind::ClaudeCode).is_empty() {
        // Without bubblewrap/socat the shipped args refuse to start (cli_sandbox checks that).
        assert!(
            shipped_args()
                .iter()
                .any(|a| a.contains("failIfUnavailable"))
        );
        return;
    }
    let d = start().await;
    let ask = Script::tool_call(
        "mcp__kernel__ask_owner",
        json!({"question": "Which colour?", "options": ["red", "blue"]}).to_string(),
    );
    let (question, after, _) = delegate_and_answer(&d, ask, 1).await;
    assert_eq!(question.text, "Which colour?");
    assert_eq!(question.options, ["red", "blue"]);
    let result = after.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result in {}", after.raw_body));
    assert_ne!(result["is_error"], true, "{result}");
    assert!(result["content"].to_string().contains("blue"), "{result}");
    assert!(
        d.agentd.output().contains("bridge tool call"),
        "logged with its delegation: {}",
        d.agentd.output()
    );
}

/// Bash asking to leave the sandbox: not allowed up front, so Claude Code asks `approve`.
fn unsandboxed_write(target: &Path) -> Script {
    Script::tool_call(
        "Bash",
        json!({
            "command": format!("echo approved > {}", target.display()),
            "description": "Write the marker",
            "dangerouslyDisableSandbox": true,
        })
        .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_claude_code_may_not_run_alone_waits_for_the_owner() {
    if !missing(CliKind::ClaudeCode).is_empty() {
        assert!(shipped_args().contains(&"mcp__kernel__approve".to_owned()));
        return;
    }
    for (option, runs) in [(0, true), (1, false)] {
        let d = start().await;
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("marker.txt");
        let (question, _, _) = delegate_and_answer(&d, unsandboxed_write(&target), option).await;
        assert_eq!(question.options, ["允许", "拒绝"]);
        assert!(
            question.text.contains("Bash") && question.text.contains("marker.txt"),
            "{}",
            question.text
        );
        assert_eq!(
            target.exists(),
            runs,
            "option {option}: {}",
            d.agentd.output()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_asks_the_owner_through_its_mcp_servers_config() {
    let fake = FakeLlm::start().await;
    let provider = format!(
        "model_providers.fake={{name=\"fake\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"CODEX_FAKE_KEY\"}}",
        fake.url()
    );
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config.example.toml");
    let raw = RawConfig::parse(&std::fs::read_to_string(example).unwrap()).unwrap();
    let mut args = raw.cli["codex"].args.clone().unwrap();
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
        json!(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("node_modules/.bin/codex")
                .display()
                .to_string()
        ),
        json!(args)
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let owned: Vec<(&str, String)> = vec![
        ("HOME", home.path().display().to_string()),
        ("CODEX_HOME", home.path().display().to_string()),
        ("CODEX_FAKE_KEY", "sk-codex-test-key-0123456789".to_owned()),
    ];
    let config_path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        AgentdProcess::start_without(&config_path, &["OPENAI_", "CODEX"], &env)
    })
    .await
    .unwrap();
    let d = Delegation {
        fake,
        cfg,
        agentd,
        _home: home,
    };
    d.fake.push(Script::tool_call(
        "delegate_to_cli",
        json!({"task": "Ask which colour.", "cli": "codex"}).to_string(),
    ));
    d.fake.push(Script::tool_call(
        "mcp__kernel/ask_owner",
        json!({"question": "Which colour?", "options": ["red", "blue"]}).to_string(),
    ));
    d.fake.push(Script::text("Blue, then."));
    d.fake.push(Script::text("好了。"));
    let mut chat = client(&d).await;
    let mut stream = send(&mut chat, "问一下").await;
    let Event::Question(question) = until(&mut stream, |e| matches!(e, Event::Question(_))).await
    else {
        unreachable!()
    };
    assert_eq!(question.options, ["red", "blue"]);
    let answered = client(&d)
        .await
        .answer(pb::AnswerRequest {
            question_id: question.question_id.clone(),
            option: Some(1),
            text: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(answered.accepted);
    let events = rest(&mut stream).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Completed(c) if c.text == "好了。")),
        "{}",
        d.agentd.output()
    );
    let after = d
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.http.path == "/v1/responses")
        .nth(1)
        .expect("Codex's request after the answer");
    let output = after.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|i| i["type"] == "function_call_output")
        .unwrap()["output"]
        .to_string();
    assert!(output.contains("blue"), "{output}");
}
