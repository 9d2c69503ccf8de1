//! `delegate_to_cli` called directly, against fake CLIs: argument building for Claude Code and
//! Codex, the result's shape, the output file, 50K head+tail truncation, exit codes, the time
//! limit killing the whole process group, one delegation at a time, and bad requests.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kernel_agentd::delegate::{Delegator, TOOL_NAME, register_tool};
use kernel_agentd::tools::{ToolContext, ToolEvent, ToolEvents, ToolOutput, ToolRegistry};
use serde_json::{Value, json};
use tests::config::TestConfig;
use tests::fake_cli::{
    CAT_BIG, FakeCli, LOG_RUN, SLEEP_FOREVER, SPAWN_GRANDCHILD, WAIT_FOR_GO, WRITE_LAST_MESSAGE,
    assert_group_gone, exit, print,
};
use tests::wait::eventually;
use tokio_util::task::TaskTracker;

const CLAUDE_ARGS: &[&str] = &["-p", "--output-format", "text"];
const CODEX_ARGS: &[&str] = &["exec", "--skip-git-repo-check", "--color", "never"];
/// TERM→KILL grace in these tests (the agent's default is 3 s).
const GRACE: Duration = Duration::from_millis(300);
const DEADLINE: Duration = Duration::from_secs(15);

/// A delegator for a config with `sections` appended, and its registry.
struct Setup {
    cfg: TestConfig,
    delegator: Arc<Delegator>,
    tools: ToolRegistry,
}

impl Setup {
    fn new(sections: &[String]) -> Setup {
        let cfg = TestConfig::new("http://127.0.0.1:9", &sections.join("\n"));
        let config = cfg.load();
        let delegator =
            Arc::new(Delegator::new(&config, TaskTracker::new()).with_kill_grace(GRACE));
        let tools = ToolRegistry::new();
        register_tool(&tools, &delegator).unwrap();
        Setup {
            cfg,
            delegator,
            tools,
        }
    }

    /// The default workspace: the config's folder.
    fn workspace(&self) -> PathBuf {
        std::fs::canonicalize(self.cfg.dir.path()).unwrap()
    }

    fn outputs_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.cfg.data_dir().join("cli_outputs")).unwrap()
    }

    async fn call(&self, input: Value) -> ToolOutput {
        self.tools
            .call(TOOL_NAME, input, ToolContext::default())
            .await
    }

    /// Calls and parses the `{ok, cli, cwd, exit_code, output_path, output}` result.
    async fn run(&self, input: Value) -> Value {
        let out = self.call(input).await;
        let value: Value = serde_json::from_str(&out.content).unwrap();
        assert!(value.get("error").is_none(), "{}", out.content);
        assert_eq!(out.is_error, value["ok"] != true, "{}", out.content);
        value
    }
}

fn file_text(path: &Value) -> String {
    std::fs::read_to_string(path.as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn claude_code_runs_args_then_the_task_in_the_workspace() {
    let cli = FakeCli::new(&print("the answer"));
    let s = Setup::new(&[cli.toml("claude_code", CLAUDE_ARGS, None)]);

    let r = s.run(json!({"task": "-v fix the build; --help"})).await;

    assert_eq!(
        cli.argv(),
        [
            "-p",
            "--output-format",
            "text",
            "--",
            "-v fix the build; --help"
        ],
        "the task, starting with '-', arrives whole after `--`"
    );
    assert_eq!(cli.cwd(), s.workspace());
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = ["ok", "cli", "cwd", "exit_code", "output_path", "output"];
    expected.sort();
    assert_eq!(keys, expected);
    assert_eq!(r["ok"], true);
    assert_eq!(r["cli"], "claude_code");
    assert_eq!(r["cwd"], s.workspace().display().to_string());
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["output"], "the answer\n");
    let path = PathBuf::from(r["output_path"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), s.outputs_dir());
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with("-claude_code.txt"), "{name}");
    assert_eq!(file_text(&r["output_path"]), "the answer\n");
}

#[tokio::test]
async fn codex_gets_cd_and_last_message_and_answers_from_that_file() {
    let cli = FakeCli::new(&format!("{}{WRITE_LAST_MESSAGE}", print("progress noise")));
    let s = Setup::new(&[cli.toml("codex", CODEX_ARGS, None)]);
    std::fs::create_dir(s.cfg.dir.path().join("proj")).unwrap();

    let r = s
        .run(json!({"task": "review", "cwd": "proj", "cli": "codex"}))
        .await;

    let proj = s.workspace().join("proj");
    let argv = cli.argv();
    let last_message = PathBuf::from(&argv[7]);
    assert_eq!(
        argv,
        [
            "exec",
            "--skip-git-repo-check",
            "--color",
            "never",
            "-C",
            proj.to_str().unwrap(),
            "--output-last-message",
            last_message.to_str().unwrap(),
            "--",
            "review"
        ]
    );
    assert_eq!(last_message.parent().unwrap(), s.outputs_dir());
    assert_ne!(last_message.to_str(), r["output_path"].as_str());
    assert_eq!(cli.cwd(), proj);
    assert_eq!(r["ok"], true);
    assert_eq!(r["cli"], "codex");
    assert_eq!(r["cwd"], proj.display().to_string());
    assert_eq!(r["output"], "LAST MESSAGE: review");
    assert_eq!(file_text(&r["output_path"]), "progress noise\n");
}

#[tokio::test]
async fn codex_without_a_last_message_answers_with_its_output() {
    let cli = FakeCli::new(&print("plain stdout answer"));
    let s = Setup::new(&[cli.toml("codex", CODEX_ARGS, None)]);
    let r = s.run(json!({"task": "t", "cli": "codex"})).await;
    assert_eq!(
        (&r["ok"], &r["output"]),
        (&json!(true), &json!("plain stdout answer\n"))
    );
}

#[tokio::test]
async fn exit_codes_and_empty_answers_decide_ok() {
    let failing = FakeCli::new(&format!("{}{}", print("boom"), exit(3)));
    let silent = FakeCli::new("");
    let s = Setup::new(&[
        failing.toml("claude_code", &[], None),
        silent.toml("quiet", &[], None),
    ]);

    let r = s.run(json!({"task": "t"})).await;
    assert_eq!((&r["ok"], &r["exit_code"]), (&json!(false), &json!(3)));
    assert_eq!(r["output"], "boom\n");

    let r = s.run(json!({"task": "t", "cli": "quiet"})).await;
    assert_eq!((&r["ok"], &r["exit_code"]), (&json!(false), &json!(0)));
    assert_eq!(r["output"], "");
}

#[tokio::test]
async fn output_reaches_the_file_while_the_cli_runs() {
    let cli = FakeCli::new(&format!(
        "{}{WAIT_FOR_GO}{}",
        print("first"),
        print("second")
    ));
    let s = Arc::new(Setup::new(&[cli.toml("claude_code", &[], None)]));
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        events: ToolEvents::new(move |e| events_tx.send(e).unwrap()),
        ..ToolContext::default()
    };
    let call = tokio::spawn({
        let s = s.clone();
        async move { s.tools.call(TOOL_NAME, json!({"task": "t"}), ctx).await }
    });

    let started = tokio::time::timeout(DEADLINE, events_rx.recv())
        .await
        .unwrap();
    assert_eq!(
        started,
        Some(ToolEvent::CliStarted {
            cli: "claude_code".into(),
            cwd: s.workspace().display().to_string()
        })
    );
    let running = s.delegator.running().expect("a running CLI");
    assert_eq!(running.name, "claude_code");
    let file = eventually("output while the CLI runs", DEADLINE, async || {
        std::fs::read_dir(s.outputs_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| std::fs::read_to_string(p).unwrap() == "first\n")
    })
    .await;
    cli.write_file("go", "");

    let out = call.await.unwrap();
    let r: Value = serde_json::from_str(&out.content).unwrap();
    assert_eq!(r["output_path"], file.display().to_string());
    assert_eq!(r["output"], "first\nsecond\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "first\nsecond\n");
}

#[tokio::test]
async fn long_output_is_cut_to_head_and_tail_with_a_marker() {
    let cli = FakeCli::new(CAT_BIG);
    let big = format!(
        "{}{}{}",
        "头".repeat(30_000),
        "中".repeat(60_000),
        "尾".repeat(30_000)
    );
    cli.write_file("big.txt", &big);
    let s = Setup::new(&[cli.toml("claude_code", &[], None)]);

    let r = s.run(json!({"task": "t"})).await;

    let output = r["output"].as_str().unwrap();
    let expected = format!(
        "{}\n\n[… 70000 characters cut …]\n\n{}",
        "头".repeat(25_000),
        "尾".repeat(25_000)
    );
    assert_eq!(output, expected);
    assert_eq!(file_text(&r["output_path"]), big, "the file has everything");
    assert_eq!(r["ok"], true);
}

#[tokio::test]
async fn the_time_limit_kills_the_whole_process_group() {
    let cli = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("started")
    ));
    let s = Setup::new(&[cli.toml("claude_code", &[], Some(1))]);
    let t = Instant::now();

    let r = s.run(json!({"task": "t"})).await;

    assert!(t.elapsed() >= Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!((&r["ok"], &r["exit_code"]), (&json!(false), &Value::Null));
    let output = r["output"].as_str().unwrap();
    assert!(output.starts_with("started\n"), "{output}");
    assert!(output.contains("time limit"), "{output}");
    assert!(file_text(&r["output_path"]).contains("time limit"));
    let (pid, grandchild) = cli.wait_for_pids(DEADLINE).await;
    assert_group_gone(pid, grandchild, DEADLINE).await;
    wait_idle(&s.delegator).await;
}

#[tokio::test]
async fn delegations_run_one_at_a_time() {
    let cli = FakeCli::new(&format!("{LOG_RUN}{}", print("done")));
    let s = Setup::new(&[cli.toml("claude_code", &[], None)]);

    let (a, b) = tokio::join!(
        s.run(json!({"task": "first"})),
        s.run(json!({"task": "second"}))
    );

    assert_eq!((&a["ok"], &b["ok"]), (&json!(true), &json!(true)));
    assert_ne!(a["output_path"], b["output_path"]);
    let log = std::fs::read_to_string(cli.dir().join("runs.log")).unwrap();
    let kinds: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(kinds, ["start", "end", "start", "end"], "{log}");
    let pids: Vec<&str> = log.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!((pids[0], pids[2]), (pids[1], pids[3]), "{log}");
}

#[tokio::test]
async fn bad_requests_are_refused_before_anything_runs() {
    let cli = FakeCli::new(&print("ran"));
    let s = Setup::new(&[cli.toml("claude_code", &[], None)]);
    let cases = [
        (json!({"task": "t", "cli": "codex"}), "must be one of"),
        (
            json!({"task": "t", "cwd": "no/such/dir"}),
            "not an existing directory",
        ),
        (json!({"task": "  "}), "the task is empty"),
        (json!({"task": "-"}), "the task is empty"),
        (json!({"cwd": "."}), "task"),
    ];
    for (input, expected) in cases {
        let out = s.call(input.clone()).await;
        assert!(out.is_error, "{input}");
        assert!(out.content.contains(expected), "{input}: {}", out.content);
    }
    assert!(cli.pid().is_none(), "nothing ran");
    assert!(s.delegator.running().is_none());
}

#[tokio::test]
async fn the_schema_offers_only_configured_clis() {
    let a = FakeCli::new("");
    let s = Setup::new(&[a.toml("claude_code", &[], None), a.toml("codex", &[], None)]);
    let spec = s
        .tools
        .specs()
        .into_iter()
        .find(|t| t.name == TOOL_NAME)
        .unwrap();
    let props = &spec.input_schema["properties"];
    assert_eq!(props["cli"]["enum"], json!(["claude_code", "codex", null]));
    assert_eq!(spec.input_schema["required"], json!(["task"]));
    assert!(props["cwd"].is_object());
    assert!(spec.description.contains("codex"));

    let none = Setup::new(&[]);
    assert!(none.tools.specs().is_empty(), "no [cli.*]: no tool");
}

#[tokio::test]
async fn a_zero_time_limit_is_refused_at_load() {
    let cli = FakeCli::new("");
    let cfg = TestConfig::new("http://127.0.0.1:9", &cli.toml("claude_code", &[], Some(0)));
    let err =
        kernel_common::Config::load(&cfg.path, kernel_common::config::Component::Agentd, &|_| {
            None
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("cli.claude_code.timeout_secs"),
        "{err}"
    );
}

/// Waits until the delegator has finished cleaning up (its running status is cleared).
async fn wait_idle(delegator: &Delegator) {
    eventually("the delegation to finish", DEADLINE, async || {
        delegator.running().is_none()
    })
    .await;
}
