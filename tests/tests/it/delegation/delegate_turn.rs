//! `delegate_to_cli` inside real turns, through the gRPC API: `CliStarted` on the Chat stream,
//! the running CLI in `GetStatus`, `Cancel` killing the whole process group, the result reaching
//! the model and slimmed in history, Kernel's secrets kept out of the CLI's environment (real
//! kernel-agentd binary), and the retention sweep at start.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use hyper_util::rt::TokioIo;
use kernel_agentd::conversation::Block;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tests::chat::{KINDS, completed, rest, send, session_id, stored, turn, until};
use tests::config::{PROVIDER_KEY, TestConfig};
use tests::fake_cli::{
    FakeCli, PRINT_ENV, SLEEP_FOREVER, SPAWN_GRANDCHILD, assert_group_gone, print,
};
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::process::AgentdProcess;
use tests::wait::eventually;
use tonic::transport::{Channel, Endpoint};

const DEADLINE: Duration = Duration::from_secs(15);
const DELEGATE: &str = r#"{"task": "-- refactor the parser", "cwd": null}"#;

async fn status(client: &mut AgentClient<Channel>) -> pb::GetStatusResponse {
    client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

fn workspace(cfg: &TestConfig) -> String {
    std::fs::canonicalize(cfg.dir.path())
        .unwrap()
        .display()
        .to_string()
}

#[tokio::test]
async fn cancel_kills_the_cli_and_everything_it_started() {
    let fake = FakeLlm::start().await;
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let extra = cli.toml("claude_code", &["-p"], None);
    let mut h = Harness::start(TestConfig::new(&fake.url(), &extra)).await;
    fake.push(Script::tool_call("delegate_to_cli", DELEGATE));
    let mut stream = send(&mut h.client, "重构解析器").await;

    let Event::CliStarted(started) =
        until(&mut stream, |e| matches!(e, Event::CliStarted(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        (started.cli.as_str(), started.cwd),
        ("claude_code", workspace(&h.cfg))
    );
    let (pid, grandchild) = cli.wait_for_pids(DEADLINE).await;
    // Kernel adds its MCP server (a loopback URL and this delegation's token, in a private file
    // named on the command line) before the task.
    let argv = cli.argv();
    assert_eq!(argv.len(), 5, "{argv:?}");
    assert_eq!([&argv[0], &argv[1]], ["-p", "--mcp-config"]);
    assert_eq!(argv[3..], ["--", "-- refactor the parser"]);
    let config_file = PathBuf::from(&argv[2]);
    let token = bridge_reached_through(&config_file, &argv).await;
    let s = status(&mut h.client).await;
    let running = s.running_cli.expect("the running CLI in GetStatus");
    assert!(running.starts_with("claude_code since "), "{running}");
    assert_eq!(
        s.running_turn.unwrap().running_tool.as_deref(),
        Some("delegate_to_cli")
    );

    let t = Instant::now();
    let cancelled = h.client.cancel(pb::CancelRequest::default()).await.unwrap();
    let cancelled = cancelled.into_inner();
    assert!(cancelled.cancelled);
    assert_eq!(cancelled.killed_cli.as_deref(), Some("claude_code"));
    let events = rest(&mut stream).await;
    assert!(
        matches!(events.last(), Some(Event::Cancelled(_))),
        "{events:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // The grandchild ignores TERM: it goes with the KILL after the grace period.
    assert_group_gone(pid, grandchild, DEADLINE).await;
    eventually(
        "the token's file to go with the run",
        DEADLINE,
        async || !config_file.exists() && !config_file.parent().unwrap().exists(),
    )
    .await;
    assert!(!token.is_empty());
    eventually("GetStatus to show no CLI", DEADLINE, async || {
        status(&mut h.client).await.running_cli.is_none()
    })
    .await;

    fake.push(Script::text("好的，已停止"));
    let events = turn(&mut h.client, "停了吗").await;
    assert_eq!(completed(&events).text, "好的，已停止");
    h.stop().await;
}

#[tokio::test]
async fn a_delegation_reaches_the_model_and_history_keeps_its_summary() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cli = FakeCli::new(&print("parser refactored, tests pass"));
        let extra = cli.toml("claude_code", &["-p"], None);
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), &extra)).await;
        fake.push(Script::tool_call("delegate_to_cli", DELEGATE));
        fake.push(Script::text("重构完成，测试通过。"));

        let events = turn(&mut h.client, "重构解析器").await;

        assert_eq!(completed(&events).text, "重构完成，测试通过。", "{kind}");
        let order: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::ToolStarted(_) => Some("tool_started"),
                Event::CliStarted(_) => Some("cli_started"),
                Event::ToolFinished(f) => Some(if f.ok { "finished_ok" } else { "failed" }),
                _ => None,
            })
            .collect();
        assert_eq!(
            order,
            ["tool_started", "cli_started", "finished_ok"],
            "{kind}"
        );

        let result = tool_result_json(&fake.requests()[1].body);
        assert_eq!(result["ok"], true, "{kind}");
        assert_eq!(
            result["output"], "parser refactored, tests pass\n",
            "{kind}"
        );
        let output_path = result["output_path"].as_str().unwrap().to_owned();
        assert!(Path::new(&output_path).exists(), "{kind}");

        let history = stored(&h.cfg, session_id(&events)).await;
        let stored_result = history
            .iter()
            .flat_map(|m| &m.content)
            .find_map(|b| match b {
                Block::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap();
        assert!(
            stored_result.starts_with("delegate_to_cli 结果已处理(成功)")
                && stored_result.contains(&format!(
                    "，{} 退出码 0，详见 {output_path}，开头：parser refactored, tests pass",
                    result["cli"].as_str().unwrap()
                )),
            "{kind}: {stored_result}"
        );
        h.stop().await;
    }
}

/// Claude Code's `--mcp-config` file of a running delegation: private (0600, in a 0700
/// directory), it names the bridge's loopback URL with a bearer token that no argument carries
/// and that the bridge accepts (a request without it is refused). The token.
async fn bridge_reached_through(config_file: &Path, argv: &[String]) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(config_file), 0o600, "{}", config_file.display());
    assert_eq!(mode(config_file.parent().unwrap()), 0o700);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(config_file).unwrap()).unwrap();
    let server = &config["mcpServers"]["kernel"];
    let url = server["url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{config}");
    let auth = server["headers"]["Authorization"].as_str().unwrap();
    let token = auth.strip_prefix("Bearer ").unwrap().to_owned();
    assert!(token.len() >= 32, "{config}");
    for arg in argv {
        assert!(
            !arg.contains(&token),
            "the token on the command line: {argv:?}"
        );
    }
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}});
    let post = |auth: Option<&str>| {
        let mut req = reqwest::Client::new()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        req.send()
    };
    assert_eq!(post(None).await.unwrap().status(), 401);
    let reached = post(Some(auth)).await.unwrap();
    assert!(reached.status().is_success(), "{:?}", reached.status());
    token
}

/// The delegate_to_cli result inside a request body: the string (in either wire format) that
/// parses as a JSON object with an `output_path`.
fn tool_result_json(body: &Value) -> Value {
    fn find(v: &Value) -> Option<Value> {
        match v {
            Value::String(s) => serde_json::from_str::<Value>(s)
                .ok()
                .filter(|j| j.get("output_path").is_some()),
            Value::Array(items) => items.iter().find_map(find),
            Value::Object(map) => map.values().find_map(find),
            _ => None,
        }
    }
    find(body).expect("the delegate_to_cli result in the request")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_environment_has_none_of_kernels_secrets() {
    const SECRETS: [(&str, &str); 7] = [
        ("KERNEL_TELEGRAM_TOKEN", "987654:env-telegram-token-value"),
        (
            "KERNEL_PROVIDER_FAKE_API_KEY",
            "sk-env-provider-key-value-1234",
        ),
        (
            "KERNEL_PROVIDER_OTHER_API_KEY",
            "sk-env-other-provider-value",
        ),
        ("KERNEL_TITLES_API_KEY", "sk-env-titles-key-value-5678"),
        ("KERNEL_AGENTD_TOKEN", "env-agentd-token-value-9999"),
        ("KERNEL_STT_API_KEY", "sk-env-stt-key-value-0000"),
        ("KERNEL_TTS_API_KEY", "sk-env-tts-key-value-1111"),
    ];
    let fake = FakeLlm::start().await;
    let cli = FakeCli::new(PRINT_ENV);
    let cfg = TestConfig::new(&fake.url(), &cli.toml("claude_code", &["-p"], None));
    let mut env: Vec<(&str, &str)> = SECRETS.to_vec();
    env.push(("KERNEL_TEST_VISIBLE", "inherited-ok"));
    let config_path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&config_path, &env))
        .await
        .unwrap();
    let mut client = connect(cfg.socket()).await;
    fake.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "print your environment"}"#,
    ));
    fake.push(Script::text("done"));

    let events = turn(&mut client, "看看环境变量").await;
    completed(&events);

    let printed = std::fs::read_to_string(only_output_file(&cfg)).unwrap();
    assert!(
        printed.contains("KERNEL_TEST_VISIBLE=inherited-ok"),
        "{printed}"
    );
    let model_saw = fake.requests()[1].raw_body.clone();
    assert!(
        model_saw.contains("KERNEL_TEST_VISIBLE"),
        "the env reached the model"
    );
    for (name, value) in SECRETS.iter().chain(&[("config key", PROVIDER_KEY)]) {
        for text in [&printed, &model_saw] {
            assert!(!text.contains(value), "{name}'s value leaked: {text}");
        }
        assert!(!printed.contains(&format!("{name}=")), "{name} leaked");
    }
    drop(agentd);
}

#[tokio::test]
async fn old_outputs_and_downloads_are_swept_at_start() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), "");
    let old = [
        cfg.data_dir()
            .join("cli_outputs/20200101-000000.000-claude_code.txt"),
        cfg.data_dir().join("downloads/old.jpg"),
    ];
    let fresh = cfg.data_dir().join("cli_outputs/fresh.txt");
    for (path, age_days) in old.iter().map(|p| (p, 8)).chain([(&fresh, 1)]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = std::fs::File::create(path).unwrap();
        let age = Duration::from_secs(age_days * 24 * 3600);
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    let h = Harness::start(cfg).await;

    eventually("the old files to be swept", DEADLINE, async || {
        !old.iter().any(|p| p.exists())
    })
    .await;
    assert!(fresh.exists(), "a file younger than 7 days stays");
    h.stop().await;
}

/// The one file in `data/cli_outputs/`.
fn only_output_file(cfg: &TestConfig) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(cfg.data_dir().join("cli_outputs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

async fn connect(path: PathBuf) -> AgentClient<Channel> {
    let channel = Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move {
                tokio::net::UnixStream::connect(path)
                    .await
                    .map(TokioIo::new)
            }
        }))
        .await
        .unwrap();
    AgentClient::new(channel)
}
