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

/// One delegation's command line, ready to spawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Variables of agentd's environment the child must not see (Kernel's own secrets).
    pub env_remove: Vec<OsString>,
}

/// The command line for `task` on `cli` in `cwd`. `last_message` is where Codex writes its final
/// answer (ignored for other kinds).
pub fn invocation(cli: &CliConfig, task: &str, cwd: &Path, last_message: &Path) -> Invocation {
    let kind = CliKind::of(cli);
    let mut args: Vec<OsString> = cli.args.iter().map(OsString::from).collect();
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
    }
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
        let inv = invocation(&c, "-rf everything", Path::new("/w"), Path::new("/o/last"));
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
        let inv = invocation(&c, "review", Path::new("/w"), Path::new("/o/last"));
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
    fn other_clis_never_see_a_leading_dash() {
        let c = cli("aider", "aider", &["--yes"]);
        let inv = invocation(&c, "--help me", Path::new("/w"), Path::new("/o/l"));
        assert_eq!(args(&inv), ["--yes", " --help me"]);
        let inv = invocation(&c, "fix it", Path::new("/w"), Path::new("/o/l"));
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
