//! `kernel-wine-smoke <dir>`: the Windows builds of both binaries, run under Wine, against the
//! Linux fakes (fake LLM, fake Bot API) and the Linux grpcurl. `<dir>` holds `kernel-agentd.exe`,
//! `kernel-tg.exe`, the test-only `bcryptprimitives.dll` and `npm/` (an npm-style install of the
//! fake CLI: `fake-cli.cmd` in front of `node_modules\fake-cli\bin\fake-cli.exe`); see
//! `tests/windows/build`. `.ci/run` runs it; it proves, in order:
//! 1. `--check` of both binaries, agentd's saying that Claude Code with the shipped sandbox args
//!    cannot run on Windows and with the Windows args (docs/windows.md) runs NOT sandboxed;
//! 2. agentd serving loopback TCP with the bearer token it generated into `data_dir/agentd.token`
//!    (no token configured): `GetStatus` answered to grpcurl reading that file, refused without;
//! 3. one full turn through kernel-tg.exe (which dials agentd's default endpoint, the named pipe);
//! 4. a multi-line Chinese task with quotes, `%` and `^` reaching the `.cmd`-installed CLI intact;
//! 5. `/cancel` killing the CLI and the child it started (a Job object).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use tests::config::TestConfig;
use tests::fake_llm::Script;
use tests::process::{Launcher, grpcurl, use_launcher, wine_path};
use tests::stack::Stack;
use tests::wait::poll;

/// What the Windows processes may take under Wine (start-up is slower there).
const SLOW: Duration = Duration::from_secs(60);

/// The task the CLI must receive byte for byte.
const TASK: &str =
    "第一行：重构解析器\n第二行 \"引号\" 与 'single'\n100% ^caret^ & | < > %PATH% !x!\n结束";

/// In the grandchild's command line (see tests/windows/fake-cli.c).
const GRANDCHILD_MARKER: &str = "kernel-wine-grandchild";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .context("usage: kernel-wine-smoke <dir with the .exe files>")?;
    let dir = std::fs::canonicalize(&dir).with_context(|| dir.display().to_string())?;
    let wine = std::env::var_os("KERNEL_WINE").map_or_else(|| PathBuf::from("wine"), PathBuf::from);

    check(&wine, &dir)?;
    println!("ok: --check (kernel-agentd.exe, kernel-tg.exe)");
    check_sandbox(&wine, &dir)?;
    println!("ok: --check says truthfully which delegations are sandboxed on Windows");

    let out = tempfile::tempdir()?;
    let npm = dir.join("npm");
    use_launcher(Launcher {
        wrapper: wine,
        bin_dir: dir.clone(),
        env: vec![
            // PATH for the Windows processes: where `fake-cli` is found (as `fake-cli.cmd`).
            ("WINEPATH".into(), wine_path(&npm)),
            ("FAKE_CLI_OUT".into(), wine_path(out.path())),
        ],
    });
    let port = free_port()?;
    let extra = format!(
        "[agentd]\nlisten = \"127.0.0.1:{port}\"\n\n\
         [cli.fake]\ncommand = \"fake-cli\"\nargs = []\ntimeout_secs = 120\n"
    );
    let stack = Stack::start_with("claude", &extra).await;

    let token = std::fs::read_to_string(stack.cfg.data_dir().join("agentd.token"))
        .context("agentd.exe wrote no data_dir/agentd.token")?;
    let token = token.trim();
    ensure!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "agentd.token does not hold 64 hex digits"
    );
    get_status(port, token)?;
    println!("ok: GetStatus over loopback TCP with the token agentd.exe generated (grpcurl)");

    stack.llm.push(Script::text("**Hello** from Windows"));
    stack.owner_says("hi");
    let answer = stack.only_answer().await;
    ensure!(answer == "<b>Hello</b> from Windows", "answer: {answer:?}");
    println!("ok: a full turn through kernel-tg.exe over the named pipe");

    if let Err(e) = delegate_intact(&stack, out.path()).await {
        let last = stack.llm.last_request().map(|r| r.raw_body);
        bail!(
            "{e:#}\n--- the model's last request: {last:?}\n--- logs:\n{}",
            stack.logs()
        );
    }
    println!("ok: a multi-line Chinese task reached the .cmd-installed CLI intact");

    if let Err(e) = cancel_kills_the_tree(&stack, out.path()).await {
        bail!("{e:#}\n--- logs:\n{}", stack.logs());
    }
    println!("ok: /cancel killed the CLI and its child (job object)");
    Ok(())
}

/// Both binaries accept a valid config with `--check`.
fn check(wine: &Path, dir: &Path) -> anyhow::Result<()> {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    for name in ["kernel-agentd", "kernel-tg"] {
        let out = Command::new(wine)
            .arg(dir.join(format!("{name}.exe")))
            .arg("--check")
            .arg("--config")
            .arg(wine_path(&cfg.path))
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        ensure!(
            out.status.success() && text.contains("config OK"),
            "{name}.exe --check: {}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// `kernel-agentd.exe --check` with the shipped Claude Code args and the Windows ones.
fn check_sandbox(wine: &Path, dir: &Path) -> anyhow::Result<()> {
    let shipped =
        r#"["-p", "--settings", '{"sandbox":{"enabled":true,"failIfUnavailable":true}}']"#;
    let windows = r#"["-p", "--permission-mode", "acceptEdits", "--permission-prompt-tool", "mcp__kernel__approve"]"#;
    let extra = format!(
        "[cli.claude_code]\ncommand = \"claude\"\nargs = {shipped}\n\n\
         [cli.claude_windows]\ncommand = \"claude\"\nargs = {windows}\n"
    );
    let cfg = TestConfig::new("http://127.0.0.1:9", &extra);
    let out = Command::new(wine)
        .arg(dir.join("kernel-agentd.exe"))
        .arg("--check")
        .arg("--config")
        .arg(wine_path(&cfg.path))
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success()
            && text.contains("none on native Windows")
            && text.contains("NOT sandboxed (no --settings with sandbox.enabled)")
            && !text.contains("    sandboxed ("),
        "kernel-agentd.exe --check on the sandbox: {}\n{text}",
        out.status
    );
    Ok(())
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The Linux grpcurl asks the Windows agentd for its status over TCP with `token`.
fn get_status(port: u16, token: &str) -> anyhow::Result<()> {
    let auth = format!("authorization: Bearer {token}");
    let addr = format!("127.0.0.1:{port}");
    let out = grpcurl(&[
        "-plaintext",
        "-H",
        &auth,
        &addr,
        "kernel.v1.Agent/GetStatus",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success() && text.contains('{'),
        "grpcurl GetStatus: {}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let denied = grpcurl(&["-plaintext", &addr, "kernel.v1.Agent/GetStatus"]);
    ensure!(
        !denied.status.success(),
        "GetStatus without the token was answered"
    );
    Ok(())
}

fn delegate(task: &str) -> Script {
    let input = serde_json::json!({ "cli": "fake", "task": task, "cwd": null }).to_string();
    Script::tool_call("delegate_to_cli", input)
}

/// The task reaches the CLI as one argument, unchanged.
async fn delegate_intact(stack: &Stack, out: &Path) -> anyhow::Result<()> {
    stack.llm.push(delegate(TASK));
    stack.llm.push(Script::text("delegated"));
    stack.owner_says("delegate it");
    let argv = out.join("argv");
    until("the fake CLI ran", async || argv.exists()).await?;
    let raw = until("the fake CLI wrote its arguments", async || {
        std::fs::read(&argv).ok().filter(|raw| raw.ends_with(&[0]))
    })
    .await?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .filter(|a| !a.is_empty())
        .collect();
    ensure!(args == [TASK], "the CLI got {args:?}, not [{TASK:?}]");
    let answer = until("the turn's answer", async || {
        stack
            .visible()
            .into_iter()
            .find(|m| m.text.contains("delegated"))
    })
    .await?;
    ensure!(answer.text == "delegated", "answer: {:?}", answer.text);
    let result = stack
        .llm
        .requests()
        .last()
        .map(|r| r.raw_body.clone())
        .unwrap_or_default();
    ensure!(
        result.contains("fake cli done"),
        "the tool result did not carry the CLI's output: {result}"
    );
    std::fs::remove_file(argv)?;
    Ok(())
}

/// Waits up to [`SLOW`] for `probe`; an error naming `what` if it never holds.
async fn until<R: tests::wait::Outcome>(
    what: &str,
    probe: impl AsyncFnMut() -> R,
) -> anyhow::Result<R::Value> {
    poll(SLOW, probe)
        .await
        .with_context(|| format!("timed out after {SLOW:?} waiting until {what}"))
}

/// The Wine processes whose command line carries `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// `/cancel` ends the CLI and the child it started.
async fn cancel_kills_the_tree(stack: &Stack, out: &Path) -> anyhow::Result<()> {
    stack.llm.push(delegate("SLEEP until cancelled"));
    stack.owner_says("start a long job");
    let ready = out.join("cli.ready");
    until("the CLI and its child are running", async || ready.exists()).await?;
    if processes_with(GRANDCHILD_MARKER).is_empty() {
        bail!("the CLI's child is not visible in /proc");
    }
    let reply = stack.command("/cancel").await;
    println!("  /cancel said: {reply}");
    until("the CLI's child is gone", async || {
        processes_with(GRANDCHILD_MARKER).is_empty()
    })
    .await?;
    until("the CLI is gone", async || {
        processes_with("fake-cli.exe").is_empty()
    })
    .await?;
    let logs = stack.logs();
    ensure!(
        !logs.contains("cannot put the CLI in a job object"),
        "the tree was killed without a job object"
    );
    Ok(())
}
