//! What exactly a delegation runs: the program, its argument vector, the working directory and
//! which environment variables it must not inherit.
//!
//! The task is always one argument and never goes through a shell. A task that starts with `-`
//! must never be read as a flag. Both real CLIs were checked (Claude Code 2.1, Codex 0.169): they
//! take everything after a `--` as the prompt, verbatim (`claude -p -- "-v …"` sends `-v …`;
//! without `--` it prints its version). `--` also stops Codex from reading a task such as
//! `review` or `resume` as its own subcommand. So Claude Code and Codex always get
//! `… -- <task>`. Any other configured CLI may not know `--`: it gets the task as is, except that
//! a task starting with `-` gets a leading space (no option parser reads ` -x` as an option).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use kernel_common::config::CliConfig;
pub use kernel_common::config::CliKind;

/// How a delegation reaches Kernel's MCP bridge (see `crate::bridge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeAccess {
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    /// The delegation's bearer token.
    pub token: String,
    /// Where Claude Code's MCP configuration (with the token) is written: a file in a private
    /// per-run directory, removed when the delegation ends. The token never is an argument
    /// (every local user can read a command line).
    pub config_file: PathBuf,
}

/// One delegation's command line, ready to spawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Variables of agentd's environment the child must not see (Kernel's own secrets).
    pub env_remove: Vec<OsString>,
    /// Variables set for the child (after the removals): Codex's bridge token.
    pub env_set: Vec<(OsString, OsString)>,
    /// Files to write (mode 0600) before the child starts: Claude Code's MCP configuration.
    pub private_files: Vec<(PathBuf, String)>,
}

/// The command line for `task` on `cli` in `cwd`. `last_message` is where Codex writes its final
/// answer (ignored for other kinds). With `bridge`, Claude Code gets `--mcp-config <file>`, the
/// file (in [`Invocation::private_files`]) naming Kernel's MCP server (`kernel`, URL and
/// `Authorization` header), and Codex
/// `-c mcp_servers.kernel.url=…` with the token in [`crate::bridge::TOKEN_ENV`] (and its tools
/// approved up front: `codex exec` would otherwise refuse every call).
pub fn invocation(
    cli: &CliConfig,
    task: &str,
    cwd: &Path,
    last_message: &Path,
    bridge: Option<&BridgeAccess>,
) -> Invocation {
    let kind = CliKind::of(cli);
    let mut args: Vec<OsString> = cli.args.iter().map(OsString::from).collect();
    let mut env_set = Vec::new();
    let mut private_files = Vec::new();
    match (kind, bridge) {
        (CliKind::ClaudeCode, Some(b)) => {
            let config = serde_json::json!({"mcpServers": {crate::bridge::SERVER_NAME: {
                "type": "http", "url": b.url,
                "headers": {"Authorization": format!("Bearer {}", b.token)},
            }}});
            args.push("--mcp-config".into());
            args.push(b.config_file.as_os_str().to_owned());
            private_files.push((b.config_file.clone(), config.to_string()));
        }
        (CliKind::Codex, Some(b)) => {
            let server = crate::bridge::SERVER_NAME;
            args.push("-c".into());
            args.push(format!("mcp_servers.{server}.url={}", toml_string(&b.url)).into());
            args.push("-c".into());
            args.push(
                format!(
                    "mcp_servers.{server}.bearer_token_env_var={}",
                    toml_string(crate::bridge::TOKEN_ENV)
                )
                .into(),
            );
            // `codex exec` runs with approvals off, which refuses MCP calls that need one;
            // Kernel's tools ask the owner themselves where it matters.
            args.push("-c".into());
            args.push(
                format!("mcp_servers.{server}.default_tools_approval_mode=\"approve\"").into(),
            );
            env_set.push((crate::bridge::TOKEN_ENV.into(), b.token.clone().into()));
        }
        _ => {}
    }
    if kind == CliKind::Codex {
        args.push("-C".into());
        args.push(cwd.as_os_str().to_owned());
        args.push("--output-last-message".into());
        args.push(last_message.as_os_str().to_owned());
    }
    match kind {
        CliKind::ClaudeCode | CliKind::Codex => {
            args.push("--".into());
            args.push(task.into());
        }
        CliKind::Other if task.starts_with('-') => args.push(format!(" {task}").into()),
        CliKind::Other => args.push(task.into()),
    }
    // On Windows an npm shim is replaced by what it runs (`program`); its script goes first.
    let program = crate::program::resolve(&cli.command);
    let args = program.leading.into_iter().chain(args).collect();
    Invocation {
        program: program.path,
        args,
        cwd: cwd.to_path_buf(),
        env_remove: secret_vars(std::env::vars_os().map(|(k, _)| k)),
        env_set,
        private_files,
    }
}

/// `s` as a TOML basic string (Codex reads `-c` values as TOML).
fn toml_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// systemd's per-service variables: a child must not talk to the service manager as agentd.
const SERVICE_VARS: &[&str] = &["NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC"];

/// The names among `names` a CLI must not inherit: Kernel's own secrets (`KERNEL_TELEGRAM_TOKEN`,
/// `KERNEL_PROVIDER_*_API_KEY`, …) — a prompt-injected "print your environment" must show none —
/// and systemd's service variables.
pub fn secret_vars(names: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    names
        .into_iter()
        .filter(|name| {
            name.to_str().is_some_and(|name| {
                kernel_common::config::is_secret_env(name) || SERVICE_VARS.contains(&name)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(name: &str, command: &str, args: &[&str]) -> CliConfig {
        CliConfig {
            name: name.into(),
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout: kernel_common::config::DEFAULT_CLI_TIMEOUT,
        }
    }

    fn args(inv: &Invocation) -> Vec<&str> {
        inv.args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn claude_code_gets_args_then_the_task_after_a_double_dash() {
        let c = cli("claude_code", "claude", &["-p", "--output-format", "text"]);
        let inv = invocation(
            &c,
            "-rf everything",
            Path::new("/w"),
            Path::new("/o/last"),
            None,
        );
        assert_eq!(inv.program, PathBuf::from("claude"));
        assert_eq!(
            args(&inv),
            ["-p", "--output-format", "text", "--", "-rf everything"]
        );
        assert_eq!(inv.cwd, PathBuf::from("/w"));
    }

    #[test]
    fn codex_gets_its_directory_and_last_message_file() {
        let c = cli("codex", "codex", &["exec", "--color", "never"]);
        let inv = invocation(&c, "review", Path::new("/w"), Path::new("/o/last"), None);
        assert_eq!(
            args(&inv),
            [
                "exec",
                "--color",
                "never",
                "-C",
                "/w",
                "--output-last-message",
                "/o/last",
                "--",
                "review"
            ]
        );
    }

    #[test]
    fn the_kind_comes_from_the_name_or_the_command() {
        assert_eq!(
            CliKind::of(&cli("claude_code", "/opt/x", &[])),
            CliKind::ClaudeCode
        );
        assert_eq!(
            CliKind::of(&cli("cc", "/usr/bin/claude", &[])),
            CliKind::ClaudeCode
        );
        assert_eq!(
            CliKind::of(&cli("oai", "C:\\npm\\codex.cmd", &[])),
            CliKind::Codex
        );
        assert_eq!(CliKind::of(&cli("aider", "aider", &[])), CliKind::Other);
    }

    #[test]
    fn the_bridge_reaches_claude_code_by_mcp_config_and_codex_by_config_and_env() {
        let access = BridgeAccess {
            url: "http://127.0.0.1:4000/mcp".into(),
            token: "t0k".into(),
            config_file: PathBuf::from("/run/x/mcp.json"),
        };
        let c = cli("claude_code", "claude", &["-p"]);
        let inv = invocation(&c, "go", Path::new("/w"), Path::new("/o/l"), Some(&access));
        let a = args(&inv);
        assert_eq!(a[..3], ["-p", "--mcp-config", "/run/x/mcp.json"]);
        assert!(
            a.iter().all(|a| !a.contains("t0k")),
            "no token in argv: {a:?}"
        );
        let [(path, config)] = &inv.private_files[..] else {
            panic!("one file: {:?}", inv.private_files);
        };
        assert_eq!(path, Path::new("/run/x/mcp.json"));
        let config: serde_json::Value = serde_json::from_str(config).unwrap();
        assert_eq!(
            config,
            serde_json::json!({"mcpServers": {"kernel": {"type": "http",
                "url": "http://127.0.0.1:4000/mcp", "headers": {"Authorization": "Bearer t0k"}}}})
        );
        assert_eq!(a[3..], ["--", "go"]);
        assert!(inv.env_set.is_empty());

        let c = cli("codex", "codex", &["exec"]);
        let inv = invocation(&c, "go", Path::new("/w"), Path::new("/o/l"), Some(&access));
        assert_eq!(
            args(&inv)[..5],
            [
                "exec",
                "-c",
                "mcp_servers.kernel.url=\"http://127.0.0.1:4000/mcp\"",
                "-c",
                "mcp_servers.kernel.bearer_token_env_var=\"KERNEL_MCP_TOKEN\""
            ]
        );
        assert_eq!(
            args(&inv)[6],
            "mcp_servers.kernel.default_tools_approval_mode=\"approve\""
        );
        assert_eq!(
            inv.env_set,
            [(OsString::from("KERNEL_MCP_TOKEN"), OsString::from("t0k"))]
        );
        assert!(args(&inv).iter().all(|a| !a.contains("t0k")));
        assert!(inv.private_files.is_empty());
        let other = cli("aider", "aider", &[]);
        let inv = invocation(
            &other,
            "go",
            Path::new("/w"),
            Path::new("/o/l"),
            Some(&access),
        );
        assert_eq!(args(&inv), ["go"], "another CLI gets nothing of the bridge");
    }

    #[test]
    fn other_clis_never_see_a_leading_dash() {
        let c = cli("aider", "aider", &["--yes"]);
        let inv = invocation(&c, "--help me", Path::new("/w"), Path::new("/o/l"), None);
        assert_eq!(args(&inv), ["--yes", " --help me"]);
        let inv = invocation(&c, "fix it", Path::new("/w"), Path::new("/o/l"), None);
        assert_eq!(args(&inv), ["--yes", "fix it"]);
    }

    #[test]
    fn only_kernel_secrets_are_removed() {
        let names = [
            "PATH",
            "KERNEL_TELEGRAM_TOKEN",
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
            "KERNEL_AGENTD_TOKEN",
            "KERNEL_TITLES_API_KEY",
            "KERNEL_CONFIG",
            "ANTHROPIC_API_KEY",
            "NOTIFY_SOCKET",
        ]
        .map(OsString::from);
        assert_eq!(
            secret_vars(names),
            [
                "KERNEL_TELEGRAM_TOKEN",
                "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
                "KERNEL_AGENTD_TOKEN",
                "KERNEL_TITLES_API_KEY",
                "NOTIFY_SOCKET"
            ]
            .map(OsString::from)
        );
    }
}
