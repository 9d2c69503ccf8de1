//! CLI delegation: [`Delegator`] runs a configured coding CLI (`[cli.<name>]`: Claude Code by
//! default, Codex when asked) on a task, for the `delegate_to_cli` tool.
//!
//! - One delegation at a time. A second call (the model may ask for two in one step) **waits**
//!   for the first to finish — including the clean-up of its process group — rather than being
//!   refused, so both tasks run, one after the other; cancelling the turn stops the wait too.
//! - The subprocess: `command + args + [task]` (see [`invocation`] for the exact argv and how a
//!   task starting with `-` is kept from being read as a flag), never through a shell, stdin from
//!   `/dev/null`, its own process group, agentd's environment less Kernel's own secrets and every
//!   variable the config references as one (`${VAR}` in MCP settings).
//! - Its stdout and stderr go straight to `data_dir/cli_outputs/<timestamp>-<cli>.txt` as they
//!   arrive; the model gets them (for Codex: its `--output-last-message` file, falling back to
//!   that output) cut in the middle at [`MAX_OUTPUT_CHARS`].
//! - Time limit `[cli.<name>] timeout_secs` (default 10 minutes); it and cancellation kill the
//!   whole group and every process that descends from the CLI even if it left the group
//!   ([`tree`]; agentd is their child subreaper on Linux): TERM, then KILL after [`KILL_GRACE`].
//!   When the CLI exits by itself, whatever it left running is ended the same way, after its
//!   result has been returned.
//! - `background = true` (when a [`Background`] runner is plugged in: the `jobs` service) hands
//!   the request to that runner and returns at once with a job id; the job keeps these rules.
//! - Each running group is recorded in `data_dir/cli_groups/` until it is gone, so that a group
//!   left running by a crashed agentd is killed when the next one starts (see [`reaper`]).
//! - `ok` is exit code 0 and a non-empty answer. A request that cannot run (unknown `cli`, missing
//!   `cwd`, empty task, a command that cannot start) is an error result, not the JSON shape.

mod excerpt;
mod group;
pub mod invocation;
mod procfs;
pub mod reaper;
mod runner;
mod tool;
pub mod tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel_common::Config;
use kernel_common::config::CliConfig;
use kernel_common::config::sandbox::{CliSandbox, SandboxState};
use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bridge::Bridge;
use crate::tools::{ToolContext, ToolEvent, ToolEvents};

pub use excerpt::cut_middle;
pub use invocation::{CliKind, Invocation};
pub use runner::Exit;
pub use tool::{Background, DelegateTool, TOOL_NAME, register_background_tool, register_tool};

/// The CLI used when the model names none.
pub const DEFAULT_CLI: &str = "claude_code";
/// The model gets at most this many characters of a CLI's answer (head + tail).
pub const MAX_OUTPUT_CHARS: usize = 50_000;
/// How long a process group has between TERM and KILL.
pub const KILL_GRACE: Duration = Duration::from_secs(3);
/// The folder under `data_dir` holding the output files.
pub const OUTPUTS_DIR: &str = "cli_outputs";
/// The longest task accepted, in bytes (one argv element; Linux allows 128 KiB).
pub const MAX_TASK_BYTES: usize = 100_000;

/// The delegation running now, for `GetStatus` and `Cancel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningCli {
    /// The configured CLI name.
    pub name: String,
    pub since: DateTime<Utc>,
    /// A background job's run (cancelling the turn does not stop it).
    pub background: bool,
}

impl std::fmt::Display for RunningCli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let since = self
            .since
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        write!(f, "{} since {since}", self.name)?;
        if self.background {
            write!(f, " (background job)")?;
        }
        Ok(())
    }
}

/// One delegation, as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DelegateRequest {
    pub task: String,
    /// Absolute, `~/…`, or relative to `general.default_workspace`; `None`: the default workspace.
    pub cwd: Option<String>,
    /// A configured `[cli.*]` name; `None`: [`DEFAULT_CLI`].
    pub cli: Option<String>,
    /// Run for a background job (see `jobs`), not for the running turn.
    pub background: bool,
    /// The session of the turn that asked (a background job reports in its Telegram topic).
    pub session_id: Option<i64>,
}

/// What the model gets back: `{ok, cli, cwd, exit_code, output_path, output}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DelegateResult {
    /// Exit code 0 and a non-empty answer.
    pub ok: bool,
    pub cli: String,
    pub cwd: String,
    /// `null` when the CLI was killed (time limit, cancel, a signal).
    pub exit_code: Option<i32>,
    /// The file with the full stdout + stderr.
    pub output_path: String,
    /// The answer, cut in the middle at [`MAX_OUTPUT_CHARS`].
    pub output: String,
}

/// Why a delegation could not run.
#[derive(Debug, thiserror::Error)]
pub enum DelegateError {
    #[error("the task is empty: describe the work for the CLI")]
    EmptyTask,
    #[error("the task is {0} bytes long; at most {MAX_TASK_BYTES} are accepted")]
    TaskTooLong(usize),
    #[error("the task contains a NUL character")]
    NulInTask,
    #[error("unknown cli {name:?}; configured: {configured}")]
    UnknownCli { name: String, configured: String },
    #[error("cwd {0} is not an existing directory")]
    BadCwd(String),
    #[error("cannot create the output file in {dir}: {message}")]
    Output { dir: String, message: String },
    #[error("could not start {command:?}: {message}")]
    Spawn { command: String, message: String },
    #[error("cancelled before the CLI started")]
    Cancelled,
}

/// Runs delegations, one at a time. Shared by the tool and the status/cancel RPCs.
#[derive(Debug)]
pub struct Delegator {
    clis: BTreeMap<String, CliConfig>,
    default_workspace: PathBuf,
    outputs_dir: PathBuf,
    /// Where running process groups are recorded (see [`reaper`]).
    records_dir: PathBuf,
    timezone: chrono_tz::Tz,
    /// The variables the config references as secrets (`${VAR}` of MCP servers), stripped from
    /// the CLI's environment with Kernel's own.
    secret_env: Vec<String>,
    kill_grace: Duration,
    /// Each CLI's sandbox, checked once at start.
    sandboxes: Vec<CliSandbox>,
    /// Kernel's MCP endpoint for the CLIs (Claude Code and Codex get a lease per delegation).
    bridge: OnceLock<Bridge>,
    serial: Arc<Semaphore>,
    running: Arc<Mutex<Option<RunningCli>>>,
    /// Supervising tasks run here, so shutdown waits for process groups to be ended.
    tasks: TaskTracker,
}

impl Delegator {
    /// A delegator for `config`'s `[cli.*]` sections; supervision runs on `tasks`. Makes this
    /// process the child subreaper of its descendants ([`tree::become_subreaper`]) and first kills
    /// the CLI process groups a crashed agentd left running ([`reaper::reap_stale`]).
    pub fn new(config: &Config, tasks: TaskTracker) -> Self {
        tree::become_subreaper();
        let records_dir = config.general.data_dir.join(reaper::RECORDS_DIR);
        let reaped = reaper::reap_stale(&records_dir);
        if reaped.killed > 0 {
            tracing::warn!(
                killed = reaped.killed,
                "killed CLI process groups left running by the previous agentd"
            );
        }
        let sandboxes: Vec<CliSandbox> = config.cli.values().map(CliSandbox::of).collect();
        for s in &sandboxes {
            match s.state() {
                SandboxState::On => tracing::info!(cli = %s.cli, sandbox = %s, "CLI sandbox"),
                _ => tracing::warn!(cli = %s.cli, sandbox = %s, "CLI sandbox"),
            }
        }
        Self {
            sandboxes,
            bridge: OnceLock::new(),
            clis: config.cli.clone(),
            default_workspace: config.general.default_workspace.clone(),
            outputs_dir: config.general.data_dir.join(OUTPUTS_DIR),
            records_dir,
            timezone: config.general.timezone,
            secret_env: config.secret_env.clone(),
            kill_grace: KILL_GRACE,
            serial: Arc::new(Semaphore::new(1)),
            running: Arc::new(Mutex::new(None)),
            tasks,
        }
    }

    /// The same with another TERM→KILL grace period.
    #[cfg(any(test, feature = "test-support"))]
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// The configured CLI names, sorted.
    pub fn clis(&self) -> Vec<String> {
        self.clis.keys().cloned().collect()
    }

    /// Plugs in Kernel's MCP bridge: from now on each Claude Code or Codex delegation reaches it
    /// with a token of its own. A second call changes nothing.
    pub fn set_bridge(&self, bridge: Bridge) {
        let _ = self.bridge.set(bridge);
    }

    /// Whether each configured CLI's commands run in its sandbox (checked at start).
    pub fn sandboxes(&self) -> &[CliSandbox] {
        &self.sandboxes
    }

    /// The delegation running now, if any.
    pub fn running(&self) -> Option<RunningCli> {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs `req` to its end (exit, time limit, or `cancel`), waiting first for a delegation
    /// already running. Reports [`ToolEvent::CliStarted`] on `events` once the CLI runs.
    pub async fn delegate(
        &self,
        req: DelegateRequest,
        cancel: &CancellationToken,
        events: &ToolEvents,
    ) -> Result<DelegateResult, DelegateError> {
        check_task(&req.task)?;
        let cli = self.cli(req.cli.as_deref())?.clone();
        let cwd = self.cwd(req.cwd.as_deref())?;
        let permit = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(DelegateError::Cancelled),
            permit = self.serial.clone().acquire_owned() => {
                permit.map_err(|_| DelegateError::Cancelled)?
            }
        };
        let (files, log) = self.output_files(&cli.name)?;
        // The CLI's way into Kernel: valid until this delegation returns (the lease drops).
        let lease = self
            .bridge
            .get()
            .filter(|_| CliKind::of(&cli) != CliKind::Other)
            .map(|b| {
                let ctx = ToolContext {
                    cancel: cancel.clone(),
                    events: events.clone(),
                    ..ToolContext::default()
                };
                b.open(&cli.name, ctx, !req.background)
            });
        // A private directory for this run's files that carry the token (removed on drop,
        // when this delegation returns).
        let run_dir = match &lease {
            Some(_) => Some(private_run_dir().map_err(|e| DelegateError::Output {
                dir: std::env::temp_dir().display().to_string(),
                message: e.to_string(),
            })?),
            None => None,
        };
        let access =
            lease
                .as_ref()
                .zip(run_dir.as_ref())
                .map(|(l, dir)| invocation::BridgeAccess {
                    url: l.url.clone(),
                    token: l.token().to_owned(),
                    config_file: dir.path().join("mcp-config.json"),
                });
        let mut invocation =
            invocation::invocation(&cli, &req.task, &cwd, &files.last_message, access.as_ref());
        for (path, content) in &invocation.private_files {
            write_private(path, content).map_err(|e| DelegateError::Output {
                dir: path.display().to_string(),
                message: e.to_string(),
            })?;
        }
        invocation
            .env_remove
            .extend(self.secret_env.iter().map(std::ffi::OsString::from));
        let started = runner::start(&invocation, log).map_err(|e| {
            tracing::warn!(cli = %cli.name, error = %e, "cannot start the CLI");
            DelegateError::Spawn {
                command: cli.command.clone(),
                message: e.to_string(),
            }
        })?;
        let record = reaper::record(&self.records_dir, started.pgid());
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(RunningCli {
            name: cli.name.clone(),
            since: Utc::now(),
            background: req.background,
        });
        let cwd_text = cwd.display().to_string();
        tracing::info!(cli = %cli.name, cwd = %cwd_text, output = %files.log.display(),
            task_chars = req.task.chars().count(), "delegation started");
        events.emit(ToolEvent::CliStarted {
            cli: cli.name.clone(),
            cwd: cwd_text.clone(),
        });
        let exit = self.supervise(started, record, &cli, cancel, permit).await;
        let result = self.result(&cli, cwd_text, &files, exit).await;
        drop(run_dir);
        tracing::info!(cli = %cli.name, ok = result.ok, exit_code = ?result.exit_code, "delegation finished");
        Ok(result)
    }

    /// Checks `req` as [`Delegator::delegate`] would before running it: the CLI name it
    /// resolves to and the working directory (for a background job that starts later).
    pub fn check(&self, req: &DelegateRequest) -> Result<(String, String), DelegateError> {
        check_task(&req.task)?;
        let cli = self.cli(req.cli.as_deref())?.name.clone();
        let cwd = self.cwd(req.cwd.as_deref())?;
        Ok((cli, cwd.display().to_string()))
    }

    fn cli(&self, name: Option<&str>) -> Result<&CliConfig, DelegateError> {
        let name = name.map(str::trim).filter(|n| !n.is_empty());
        let name = name.unwrap_or(DEFAULT_CLI);
        self.clis
            .get(name)
            .ok_or_else(|| DelegateError::UnknownCli {
                name: name.to_owned(),
                configured: self.clis().join(", "),
            })
    }

    fn cwd(&self, arg: Option<&str>) -> Result<PathBuf, DelegateError> {
        let path = match arg.map(str::trim).filter(|p| !p.is_empty()) {
            None => self.default_workspace.clone(),
            Some(p) => self.default_workspace.join(expand_home(p)),
        };
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => Ok(tidy(path)),
            _ => Err(DelegateError::BadCwd(path.display().to_string())),
        }
    }

    /// Starts supervising on the tracker (so the group is ended even if this call is dropped)
    /// and waits for how the CLI ended. The running status, the group's `record` and `permit` are
    /// released once the whole group is gone.
    async fn supervise(
        &self,
        started: runner::Started,
        record: Option<reaper::Record>,
        cli: &CliConfig,
        cancel: &CancellationToken,
        permit: OwnedSemaphorePermit,
    ) -> Exit {
        let running = self.running.clone();
        let (done_tx, done_rx) = oneshot::channel();
        let (limit, grace, cancel) = (cli.timeout, self.kill_grace, cancel.clone());
        self.tasks.spawn(async move {
            started.supervise(limit, grace, cancel, done_tx).await;
            drop(record);
            *running.lock().unwrap_or_else(|e| e.into_inner()) = None;
            drop(permit);
        });
        done_rx.await.unwrap_or(Exit::Cancelled)
    }

    /// The result for the model: the answer (Codex: its last message, else the output), cut in
    /// the middle; a note about a kill appended to the output file and the answer.
    async fn result(
        &self,
        cli: &CliConfig,
        cwd: String,
        files: &OutputFiles,
        exit: Exit,
    ) -> DelegateResult {
        let note = exit.note();
        if let Some(note) = &note {
            append_line(&files.log, note);
        }
        let (log, last) = (files.log.clone(), files.last_message.clone());
        let codex = CliKind::of(cli) == CliKind::Codex;
        let answer = tokio::task::spawn_blocking(move || {
            let from_last = codex
                .then(|| excerpt::excerpt(&last, MAX_OUTPUT_CHARS).ok())
                .flatten()
                .filter(|t| !t.trim().is_empty());
            from_last.map_or_else(|| excerpt::excerpt(&log, MAX_OUTPUT_CHARS), Ok)
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
        let mut output = answer.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read the CLI's output");
            String::new()
        });
        let answered = !output.trim().is_empty();
        if let Some(note) = note.filter(|n| !output.contains(n.as_str())) {
            output = format!("{output}\n{note}").trim_start().to_owned();
        }
        let exit_code = exit.code();
        DelegateResult {
            ok: exit_code == Some(0) && answered,
            cli: cli.name.clone(),
            cwd,
            exit_code,
            output_path: files.log.display().to_string(),
            output,
        }
    }

    /// Creates `<timestamp>-<cli>.txt` (never overwriting one; returned open for appending)
    /// and names Codex's last-message file next to it.
    fn output_files(&self, cli: &str) -> Result<(OutputFiles, std::fs::File), DelegateError> {
        let failed = |e: std::io::Error| DelegateError::Output {
            dir: self.outputs_dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&self.outputs_dir).map_err(failed)?;
        let stamp = Utc::now()
            .with_timezone(&self.timezone)
            .format("%Y%m%d-%H%M%S%.3f");
        let safe: String = cli
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        for n in 1..100 {
            let stem = match n {
                1 => format!("{stamp}-{safe}"),
                n => format!("{stamp}-{safe}-{n}"),
            };
            let log = self.outputs_dir.join(format!("{stem}.txt"));
            match create_private(&log) {
                Ok(handle) => {
                    let last_message = self.outputs_dir.join(format!("{stem}.last-message.txt"));
                    return Ok((OutputFiles { log, last_message }, handle));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e)),
            }
        }
        Err(failed(std::io::Error::other("too many output files")))
    }
}

/// The output file and where Codex writes its last message.
struct OutputFiles {
    log: PathBuf,
    last_message: PathBuf,
}

fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// A new directory only this user can enter (0700 on Unix), removed when dropped.
fn private_run_dir() -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("kernel-run-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    builder.tempdir()
}

/// Writes `content` to the new file `path`, readable only by this user (0600 on Unix).
fn write_private(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(content.as_bytes())
}

fn append_line(path: &Path, line: &str) {
    use std::io::Write as _;
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| writeln!(f, "\n{line}"));
    if let Err(e) = written {
        tracing::warn!(error = %e, "cannot append to the CLI's output file");
    }
}

fn check_task(task: &str) -> Result<(), DelegateError> {
    let trimmed = task.trim();
    if trimmed.is_empty() || trimmed == "-" {
        return Err(DelegateError::EmptyTask);
    }
    if task.len() > MAX_TASK_BYTES {
        return Err(DelegateError::TaskTooLong(task.len()));
    }
    if task.contains('\0') {
        return Err(DelegateError::NulInTask);
    }
    Ok(())
}

/// `~` and `~/…` from `$HOME` (`%USERPROFILE%` on Windows); anything else as given.
fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" });
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with(['/', '\\']) => match home() {
            Some(home) => PathBuf::from(home).join(rest.trim_start_matches(['/', '\\'])),
            None => PathBuf::from(path),
        },
        _ => PathBuf::from(path),
    }
}

/// `path` without `.`/`..` detours where it can be resolved (unix; Windows keeps it as is to
/// avoid `\\?\` paths that CLIs mishandle).
fn tidy(path: PathBuf) -> PathBuf {
    if cfg!(unix) {
        std::fs::canonicalize(&path).unwrap_or(path)
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_checked() {
        assert!(matches!(check_task("  "), Err(DelegateError::EmptyTask)));
        assert!(matches!(check_task(" - "), Err(DelegateError::EmptyTask)));
        assert!(matches!(check_task("a\0b"), Err(DelegateError::NulInTask)));
        assert!(matches!(
            check_task(&"x".repeat(MAX_TASK_BYTES + 1)),
            Err(DelegateError::TaskTooLong(_))
        ));
        assert!(check_task("-v fix the build").is_ok());
    }

    #[test]
    fn home_is_expanded_only_at_the_start() {
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(expand_home("~/src/x"), home.join("src/x"));
        assert_eq!(expand_home("~"), home);
        assert_eq!(expand_home("~bob/x"), PathBuf::from("~bob/x"));
        assert_eq!(expand_home("a/~/b"), PathBuf::from("a/~/b"));
    }

    #[test]
    fn running_cli_shows_name_and_since() {
        let since = DateTime::parse_from_rfc3339("2025-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut r = RunningCli {
            name: "codex".into(),
            since,
            background: false,
        };
        assert_eq!(r.to_string(), "codex since 2025-01-02T03:04:05Z");
        r.background = true;
        assert_eq!(
            r.to_string(),
            "codex since 2025-01-02T03:04:05Z (background job)"
        );
    }
}
