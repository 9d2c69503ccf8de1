//! Whether a delegated CLI's commands run in the CLI's own sandbox: [`Confinement`], read from
//! its configured arguments alone ([`confinement`], a pure function), and [`CliSandbox`], that
//! plus what this machine lacks to run the sandbox ([`missing`]). `--check` prints it and
//! agentd's `GetStatus` (kernel-tg's `/status`) reports it, so an unconfined delegation is never
//! silent.
//!
//! - Codex: `--sandbox workspace-write` (or `-s`, `--full-auto`, `-c sandbox_mode=…`) confines
//!   writes to the workspace (and `/tmp` unless `sandbox_workspace_write.exclude_slash_tmp`),
//!   network off unless `sandbox_workspace_write.network_access=true`; `read-only` allows no
//!   writes; `danger-full-access` and `--dangerously-bypass-approvals-and-sandbox` run unconfined.
//!   On Linux it uses its bundled bubblewrap and needs user namespaces; without them its commands
//!   fail (they never run unconfined).
//! - Claude Code: `--settings '{"sandbox":{"enabled":true,…}}'` runs Bash in its sandbox
//!   (bubblewrap + socat on Linux), writes confined to the workspace, network only to
//!   `sandbox.network.allowedDomains`. Without the programs it refuses to start when
//!   `failIfUnavailable` is set, and otherwise runs commands unconfined — said as such. On
//!   native Windows Claude Code has no sandbox at all: the shipped `failIfUnavailable` args
//!   would refuse every delegation there, so Windows gets its own args (docs/windows.md), said
//!   as NOT sandboxed. [`Platform`] is a parameter so the decision is tested on every OS.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::{CliConfig, CliKind};

/// What a CLI's arguments say about its sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// The commands it runs are confined by its sandbox.
    Sandboxed {
        /// May they write in the workspace (else nowhere)?
        workspace_writes: bool,
        /// May they also write in `/tmp`?
        tmp_writes: bool,
        /// May they reach the network?
        network: bool,
        /// Claude Code: refuses to start without a working sandbox (`failIfUnavailable`).
        /// Codex always fails closed.
        fails_closed: bool,
    },
    /// They run unconfined; `reason` names the argument (or its absence).
    Unsandboxed { reason: String },
    /// The arguments do not say (another CLI, or settings kept in a file).
    Unknown { reason: String },
}

/// One configured CLI's sandbox on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliSandbox {
    /// The `[cli.<name>]` name.
    pub cli: String,
    pub confinement: Confinement,
    /// What this machine lacks to run that sandbox (programs, user namespaces); empty when
    /// nothing is missing or nothing was checked.
    pub missing: Vec<String>,
}

/// The state a status line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxState {
    /// Sandboxed, and the machine has what it needs.
    On,
    /// Its commands run unconfined.
    Off,
    /// Sandboxed by its arguments, but the sandbox cannot run here: the CLI refuses to start (or
    /// its commands fail) rather than run unconfined.
    Unavailable,
    /// Not known.
    Unknown,
}

impl CliSandbox {
    /// `cli`'s sandbox, with this machine checked for what it needs.
    pub fn of(cli: &CliConfig) -> CliSandbox {
        Self::of_on(cli, Platform::current())
    }

    /// `cli`'s sandbox on `platform` (this machine's programs checked on Linux).
    pub fn of_on(cli: &CliConfig, platform: Platform) -> CliSandbox {
        let confinement = confinement(cli);
        let missing = match confinement {
            Confinement::Sandboxed { .. } => missing_on(CliKind::of(cli), platform),
            _ => Vec::new(),
        };
        CliSandbox {
            cli: cli.name.clone(),
            confinement,
            missing,
        }
    }

    /// On, off, unavailable or unknown. A sandbox that cannot run and does not fail closed runs
    /// the commands unconfined: off.
    pub fn state(&self) -> SandboxState {
        match &self.confinement {
            Confinement::Sandboxed { .. } if self.missing.is_empty() => SandboxState::On,
            Confinement::Sandboxed {
                fails_closed: true, ..
            } => SandboxState::Unavailable,
            Confinement::Sandboxed { .. } | Confinement::Unsandboxed { .. } => SandboxState::Off,
            Confinement::Unknown { .. } => SandboxState::Unknown,
        }
    }
}

impl fmt::Display for CliSandbox {
    /// The `--check` line (English): `sandboxed (writes: workspace; network: off)`, `NOT
    /// sandboxed (…)`, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let missing = self.missing.join(", ");
        match (&self.confinement, self.state()) {
            (
                Confinement::Sandboxed {
                    workspace_writes,
                    tmp_writes,
                    network,
                    ..
                },
                state,
            ) => {
                let writes = match (workspace_writes, tmp_writes) {
                    (true, true) => "workspace and /tmp",
                    (true, false) => "workspace",
                    (false, true) => "/tmp",
                    (false, false) => "none",
                };
                let network = if *network { "on" } else { "off" };
                match state {
                    SandboxState::On => {
                        write!(f, "sandboxed (writes: {writes}; network: {network})")
                    }
                    SandboxState::Unavailable => write!(
                        f,
                        "sandbox configured but unavailable here (missing: {missing}): the CLI \
                         refuses to run rather than run unconfined"
                    ),
                    _ => write!(
                        f,
                        "NOT sandboxed: the sandbox is configured but unavailable here (missing: \
                         {missing}) and the CLI would run its commands unconfined (set \
                         failIfUnavailable)"
                    ),
                }
            }
            (Confinement::Unsandboxed { reason }, _) => write!(f, "NOT sandboxed ({reason})"),
            (Confinement::Unknown { reason }, _) => write!(f, "sandbox unknown ({reason})"),
        }
    }
}

/// What `cli`'s arguments say about its sandbox (no I/O).
pub fn confinement(cli: &CliConfig) -> Confinement {
    match CliKind::of(cli) {
        CliKind::Codex => codex(&cli.args),
        CliKind::ClaudeCode => claude_code(&cli.args),
        CliKind::Other => Confinement::Unknown {
            reason: "not Claude Code or Codex: Kernel cannot tell".into(),
        },
    }
}

/// `flag value` or `flag=value` at `args[i]`: the value and how many arguments it took.
fn value_of<'a>(args: &'a [String], i: usize, flags: &[&str]) -> Option<(&'a str, usize)> {
    let arg = args[i].as_str();
    for flag in flags {
        if arg == *flag {
            return args.get(i + 1).map(|v| (v.as_str(), 2));
        }
        if let Some(v) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            return Some((v, 1));
        }
    }
    None
}

/// A TOML value as Codex's `-c key=value` reads it, quotes taken off.
fn unquote(value: &str) -> &str {
    let v = value.trim();
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(v)
}

fn codex(args: &[String]) -> Confinement {
    let (mut mode, mut network, mut keep_tmp) = (None::<String>, false, true);
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            break;
        }
        if matches!(arg, "--dangerously-bypass-approvals-and-sandbox" | "--yolo") {
            return Confinement::Unsandboxed {
                reason: arg.to_owned(),
            };
        }
        if arg == "--full-auto" {
            mode = Some("workspace-write".into());
        } else if let Some((v, n)) = value_of(args, i, &["--sandbox", "-s"]) {
            mode = Some(v.to_owned());
            i += n;
            continue;
        } else if let Some((kv, n)) = value_of(args, i, &["--config", "-c"]) {
            if let Some((key, value)) = kv.split_once('=') {
                let value = unquote(value);
                match key.trim() {
                    "sandbox_mode" => mode = Some(value.to_owned()),
                    "sandbox_workspace_write.network_access" => network = value == "true",
                    "sandbox_workspace_write.exclude_slash_tmp" => keep_tmp = value != "true",
                    _ => {}
                }
            }
            i += n;
            continue;
        }
        i += 1;
    }
    match mode.as_deref() {
        Some("workspace-write") => Confinement::Sandboxed {
            workspace_writes: true,
            tmp_writes: keep_tmp,
            network,
            fails_closed: true,
        },
        Some("read-only") => Confinement::Sandboxed {
            workspace_writes: false,
            tmp_writes: false,
            network: false,
            fails_closed: true,
        },
        Some("danger-full-access") => Confinement::Unsandboxed {
            reason: "--sandbox danger-full-access".into(),
        },
        Some(other) => Confinement::Unknown {
            reason: format!("unknown sandbox mode {other:?}"),
        },
        None => Confinement::Unknown {
            reason: "no --sandbox: ~/.codex/config.toml decides".into(),
        },
    }
}

fn claude_code(args: &[String]) -> Confinement {
    let mut settings = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--" {
            break;
        }
        if args[i] == "--dangerously-skip-permissions" {
            return Confinement::Unsandboxed {
                reason: args[i].clone(),
            };
        }
        if let Some((v, n)) = value_of(args, i, &["--settings"]) {
            settings = Some(v);
            i += n;
            continue;
        }
        i += 1;
    }
    let Some(settings) = settings else {
        return Confinement::Unsandboxed {
            reason: "no --settings with sandbox.enabled".into(),
        };
    };
    if !settings.trim_start().starts_with('{') {
        return Confinement::Unknown {
            reason: "--settings names a file".into(),
        };
    }
    let Ok(settings) = serde_json::from_str::<Value>(settings) else {
        return Confinement::Unknown {
            reason: "--settings is not valid JSON".into(),
        };
    };
    let sandbox = &settings["sandbox"];
    if sandbox["enabled"] != Value::Bool(true) {
        return Confinement::Unsandboxed {
            reason: "--settings without sandbox.enabled".into(),
        };
    }
    let network = sandbox["network"]["allowedDomains"]
        .as_array()
        .is_some_and(|d| !d.is_empty());
    Confinement::Sandboxed {
        workspace_writes: true,
        tmp_writes: false,
        network,
        fails_closed: sandbox["failIfUnavailable"] == Value::Bool(true),
    }
}

/// The operating system a delegated CLI's sandbox is judged for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Linux,
    /// Native Windows: Claude Code has no sandbox there.
    Windows,
    /// macOS and the rest: the CLIs use the system's own sandbox.
    Other,
}

impl Platform {
    /// The platform this binary runs on.
    pub fn current() -> Platform {
        if cfg!(target_os = "linux") {
            Platform::Linux
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Other
        }
    }
}

/// What Claude Code lacks on native Windows.
pub const NO_SANDBOX_ON_WINDOWS: &str =
    "a sandbox: Claude Code has none on native Windows (use the Windows args of docs/windows.md)";

/// What this machine lacks to run `kind`'s sandbox.
pub fn missing(kind: CliKind) -> Vec<String> {
    missing_on(kind, Platform::current())
}

/// What `platform` lacks to run `kind`'s sandbox: on Linux the programs are looked for on this
/// machine; on Windows Claude Code has no sandbox; elsewhere the CLIs use the system's own.
pub fn missing_on(kind: CliKind, platform: Platform) -> Vec<String> {
    match (platform, kind) {
        (Platform::Linux, _) => {}
        (Platform::Windows, CliKind::ClaudeCode) => return vec![NO_SANDBOX_ON_WINDOWS.to_owned()],
        _ => return Vec::new(),
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path =
        |program: &str| std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)));
    match kind {
        CliKind::ClaudeCode => ["bwrap", "socat"]
            .into_iter()
            .filter(|p| !on_path(p))
            .map(str::to_owned)
            .collect(),
        // Codex brings its own bubblewrap; it needs user namespaces.
        CliKind::Codex => {
            let max = std::fs::read_to_string("/proc/sys/user/max_user_namespaces");
            match max.map(|m| m.trim().parse::<u64>().unwrap_or(0)) {
                Ok(0) => vec!["user namespaces (user.max_user_namespaces = 0)".to_owned()],
                _ => Vec::new(),
            }
        }
        CliKind::Other => Vec::new(),
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(name: &str, args: &[&str]) -> CliConfig {
        CliConfig {
            name: name.into(),
            command: name.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout: super::super::DEFAULT_CLI_TIMEOUT,
        }
    }

    fn sandboxed(workspace: bool, tmp: bool, network: bool, closed: bool) -> Confinement {
        Confinement::Sandboxed {
            workspace_writes: workspace,
            tmp_writes: tmp,
            network,
            fails_closed: closed,
        }
    }

    #[test]
    fn codex_bypass_is_unsandboxed() {
        let c = cli(
            "codex",
            &["exec", "--dangerously-bypass-approvals-and-sandbox"],
        );
        assert_eq!(
            confinement(&c),
            Confinement::Unsandboxed {
                reason: "--dangerously-bypass-approvals-and-sandbox".into()
            }
        );
        let c = cli("codex", &["exec", "-s", "danger-full-access"]);
        assert!(matches!(confinement(&c), Confinement::Unsandboxed { .. }));
    }

    #[test]
    fn codex_workspace_write_in_every_spelling() {
        for args in [
            &["exec", "--sandbox", "workspace-write"][..],
            &["exec", "--sandbox=workspace-write"],
            &["exec", "-s", "workspace-write"],
            &["exec", "--full-auto"],
            &["exec", "-c", "sandbox_mode=\"workspace-write\""],
        ] {
            assert_eq!(
                confinement(&cli("codex", args)),
                sandboxed(true, true, false, true),
                "{args:?}"
            );
        }
        let c = cli(
            "codex",
            &[
                "exec",
                "--sandbox",
                "workspace-write",
                "-c",
                "sandbox_workspace_write.exclude_slash_tmp=true",
                "-c",
                "sandbox_workspace_write.network_access=true",
            ],
        );
        assert_eq!(confinement(&c), sandboxed(true, false, true, true));
        let c = cli("codex", &["exec", "--sandbox", "read-only"]);
        assert_eq!(confinement(&c), sandboxed(false, false, false, true));
        let c = cli("codex", &["exec", "--color", "never"]);
        assert!(matches!(confinement(&c), Confinement::Unknown { .. }));
    }

    #[test]
    fn claude_code_reads_its_settings_json() {
        let settings = r#"{"sandbox":{"enabled":true,"failIfUnavailable":true}}"#;
        let c = cli("claude_code", &["-p", "--settings", settings]);
        assert_eq!(confinement(&c), sandboxed(true, false, false, true));
        let settings =
            r#"{"sandbox":{"enabled":true,"network":{"allowedDomains":["github.com"]}}}"#;
        let c = cli("claude_code", &["-p", "--settings", settings]);
        assert_eq!(confinement(&c), sandboxed(true, false, true, false));
        let c = cli("claude_code", &["-p", "--allowedTools", "Bash"]);
        assert!(matches!(confinement(&c), Confinement::Unsandboxed { .. }));
        let c = cli(
            "claude_code",
            &["-p", "--settings", r#"{"sandbox":{"enabled":false}}"#],
        );
        assert!(matches!(confinement(&c), Confinement::Unsandboxed { .. }));
        let c = cli("claude_code", &["-p", "--settings", "/etc/claude.json"]);
        assert!(matches!(confinement(&c), Confinement::Unknown { .. }));
        let c = cli(
            "claude_code",
            &["--dangerously-skip-permissions", "--settings", settings],
        );
        assert!(matches!(confinement(&c), Confinement::Unsandboxed { .. }));
    }

    #[test]
    fn other_clis_are_unknown() {
        assert!(matches!(
            confinement(&cli("aider", &["--yes"])),
            Confinement::Unknown { .. }
        ));
    }

    #[test]
    fn a_sandbox_that_cannot_run_is_unavailable_or_off() {
        let mut s = CliSandbox {
            cli: "claude_code".into(),
            confinement: sandboxed(true, false, false, true),
            missing: Vec::new(),
        };
        assert_eq!(s.state(), SandboxState::On);
        assert_eq!(s.to_string(), "sandboxed (writes: workspace; network: off)");
        s.missing = vec!["bwrap".into(), "socat".into()];
        assert_eq!(s.state(), SandboxState::Unavailable);
        assert!(s.to_string().contains("missing: bwrap, socat"), "{s}");
        s.confinement = sandboxed(true, false, false, false);
        assert_eq!(s.state(), SandboxState::Off);
        assert!(s.to_string().starts_with("NOT sandboxed"), "{s}");
        s.confinement = Confinement::Unsandboxed {
            reason: "--yolo".into(),
        };
        assert_eq!(s.to_string(), "NOT sandboxed (--yolo)");
    }

    /// The args config.example.toml ships for Linux and macOS, and the Windows ones of
    /// docs/windows.md.
    const SHIPPED: &str =
        r#"{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true}}"#;
    const WINDOWS_ARGS: &[&str] = &[
        "-p",
        "--output-format",
        "text",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Edit,Write,Read,Glob,Grep,NotebookEdit,mcp__kernel",
        "--permission-prompt-tool",
        "mcp__kernel__approve",
    ];

    #[test]
    fn on_windows_claude_code_is_never_said_to_be_sandboxed() {
        // The shipped args: refused on Windows (said so), never "sandboxed".
        let shipped = cli("claude_code", &["-p", "--settings", SHIPPED]);
        let s = CliSandbox::of_on(&shipped, Platform::Windows);
        assert_eq!(s.state(), SandboxState::Unavailable);
        assert!(s.to_string().contains("none on native Windows"), "{s}");
        assert!(s.to_string().contains("refuses to run"), "{s}");
        // Without failIfUnavailable it would run unconfined: off, in words.
        let open = cli(
            "claude_code",
            &["-p", "--settings", r#"{"sandbox":{"enabled":true}}"#],
        );
        let s = CliSandbox::of_on(&open, Platform::Windows);
        assert_eq!(s.state(), SandboxState::Off);
        assert!(s.to_string().starts_with("NOT sandboxed"), "{s}");
        // The Windows args: runs, NOT sandboxed (each command asks the owner through the bridge).
        let windows = cli("claude_code", WINDOWS_ARGS);
        let s = CliSandbox::of_on(&windows, Platform::Windows);
        assert_eq!(s.state(), SandboxState::Off);
        assert_eq!(
            s.to_string(),
            "NOT sandboxed (no --settings with sandbox.enabled)"
        );
        // Codex and macOS are judged as before.
        assert!(missing_on(CliKind::Codex, Platform::Windows).is_empty());
        assert_eq!(
            CliSandbox::of_on(&shipped, Platform::Other).state(),
            SandboxState::On
        );
    }
}
