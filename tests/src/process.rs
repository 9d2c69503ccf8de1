//! Running the real binaries (`kernel-agentd`, `kernel-tg`) and the real `grpcurl` as processes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

/// The API key the real Claude Code CLI sends to the fake LLM in the offline tests.
pub const CLAUDE_CODE_TEST_KEY: &str = "sk-ant-claude-code-test-key-0123456789";

/// Path of a workspace binary built by `cargo build --workspace --bins` (the test command does).
pub fn bin_path(name: &str) -> PathBuf {
    // target/<profile>/deps/<test-exe> → target/<profile>/<name>
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace --bins` first (scripts/test does)",
        path.display()
    );
    path
}

/// How the binaries are started when not directly: through `wrapper` (Wine), as
/// `<bin_dir>/<name>.exe`, with Windows paths (`Z:\…`) for their config and `env` added. Set
/// once per process by [`use_launcher`] (the `kernel-wine-smoke` binary does).
#[derive(Debug, Clone)]
pub struct Launcher {
    pub wrapper: PathBuf,
    pub bin_dir: PathBuf,
    pub env: Vec<(String, String)>,
}

static LAUNCHER: OnceLock<Launcher> = OnceLock::new();

/// Starts every binary of this process through `launcher` from now on (the first call wins).
pub fn use_launcher(launcher: Launcher) {
    let _ = LAUNCHER.set(launcher);
}

/// `path` as Wine's `Z:` drive sees it (`/tmp/x` → `Z:\tmp\x`).
pub fn wine_path(path: &Path) -> String {
    format!("Z:{}", path.display().to_string().replace('/', "\\"))
}

/// The command that starts the binary `name` with `--config <config>`.
pub(crate) fn bin_command(name: &str, config: &Path) -> Command {
    match LAUNCHER.get() {
        None => {
            let mut cmd = Command::new(bin_path(name));
            cmd.arg("--config").arg(config);
            cmd
        }
        Some(launcher) => {
            let mut cmd = Command::new(&launcher.wrapper);
            cmd.arg(launcher.bin_dir.join(format!("{name}.exe")))
                .arg("--config")
                .arg(wine_path(config))
                .envs(launcher.env.iter().map(|(k, v)| (k, v)));
            cmd
        }
    }
}

/// Path of the real grpcurl: `$KERNEL_TEST_GRPCURL`, else `target/venv/bin/grpcurl`
/// (installed by scripts/test).
pub fn grpcurl_path() -> PathBuf {
    if let Some(p) = std::env::var_os("KERNEL_TEST_GRPCURL") {
        return PathBuf::from(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join("target/venv/bin/grpcurl");
    assert!(
        path.exists(),
        "grpcurl is missing: run scripts/test (it installs it into target/venv)"
    );
    path
}

/// Runs grpcurl with `args`; returns its output.
pub fn grpcurl(args: &[&str]) -> Output {
    Command::new(grpcurl_path())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run grpcurl")
}

/// A running workspace binary started with `--config`; killed (SIGKILL) and reaped on drop.
pub struct BinProcess {
    name: &'static str,
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl BinProcess {
    /// Starts `<name> --config <config>` with `env` added (after `NO_COLOR=1`, `RUST_LOG=info`)
    /// and waits, by reading its output (no polling), until it prints `ready`. Panics with its
    /// output if it exits first.
    pub fn start(
        name: &'static str,
        config: &Path,
        env: &[(&str, &str)],
        ready: &'static str,
    ) -> BinProcess {
        Self::start_without(name, config, &[], env, ready)
    }

    /// Like [`BinProcess::start`], without the inherited variables whose names start with one of
    /// `remove` (e.g. the test runner's own `ANTHROPIC_` settings).
    pub fn start_without(
        name: &'static str,
        config: &Path,
        remove: &[&str],
        env: &[(&str, &str)],
        ready: &'static str,
    ) -> BinProcess {
        let mut cmd = bin_command(name, config);
        cmd.env("NO_COLOR", "1").env("RUST_LOG", "info");
        for (k, _) in std::env::vars_os() {
            if k.to_str()
                .is_some_and(|k| remove.iter().any(|p| k.starts_with(p)))
            {
                cmd.env_remove(k);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let lines = lines.clone();
            let ready_tx = ready_tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let is_ready = line.contains(ready);
                    // Kept before readiness is reported, so the caller can read the ready line.
                    lines.lock().unwrap().push(line);
                    if is_ready {
                        let _ = ready_tx.send(true);
                    }
                }
                let _ = ready_tx.send(false);
            });
        }
        drop(ready_tx);
        let mut proc = BinProcess { name, child, lines };
        // Both readers report `false` at EOF; ready wins if it comes first.
        for _ in 0..2 {
            match ready_rx.recv_timeout(Duration::from_secs(60)) {
                Ok(true) => return proc,
                Ok(false) => continue,
                Err(_) => break,
            }
        }
        let _ = proc.child.kill();
        panic!("{name} did not become ready:\n{}", proc.output());
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let name = self.name;
        self.child
            .wait()
            .unwrap_or_else(|e| panic!("wait for {name}: {e}"))
    }
}

impl Drop for BinProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `kernel-agentd` process; killed on drop.
pub struct AgentdProcess(BinProcess);

impl AgentdProcess {
    /// Starts `kernel-agentd --config <config>` with `env` added and waits until it is ready.
    pub fn start(config: &Path, env: &[(&str, &str)]) -> AgentdProcess {
        AgentdProcess(BinProcess::start(
            "kernel-agentd",
            config,
            env,
            "kernel-agentd ready",
        ))
    }

    /// Starts kernel-agentd to delegate to the real Claude Code CLI offline: the CLI's `HOME` is
    /// `home`, its API the fake LLM at `llm_url` with [`CLAUDE_CODE_TEST_KEY`], everything that
    /// would reach the network off, and the test runner's own `ANTHROPIC_*` / `CLAUDE*`
    /// variables not passed on. Waits for readiness off the runtime.
    pub async fn start_for_claude_code(config: &Path, home: &Path, llm_url: &str) -> AgentdProcess {
        let owned: Vec<(&'static str, String)> = vec![
            ("HOME", home.display().to_string()),
            ("ANTHROPIC_BASE_URL", llm_url.to_owned()),
            ("ANTHROPIC_API_KEY", CLAUDE_CODE_TEST_KEY.to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
            ("DISABLE_ERROR_REPORTING", "1".to_owned()),
        ];
        let config = config.to_owned();
        tokio::task::spawn_blocking(move || {
            let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
            AgentdProcess::start_without(&config, &["ANTHROPIC_", "CLAUDE"], &env)
        })
        .await
        .expect("kernel-agentd start task")
    }

    /// Like [`AgentdProcess::start`], without the inherited variables whose names start with
    /// one of `remove`.
    pub fn start_without(config: &Path, remove: &[&str], env: &[(&str, &str)]) -> AgentdProcess {
        AgentdProcess(BinProcess::start_without(
            "kernel-agentd",
            config,
            remove,
            env,
            "kernel-agentd ready",
        ))
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.0.output()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.0.pid()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(self) -> std::process::ExitStatus {
        self.0.terminate()
    }
}
