//! [`CliKind`]: which coding CLI a `[cli.<name>]` section runs, which decides how Kernel calls it
//! (agentd's `delegate::invocation`) and how its sandbox is read from its arguments
//! ([`super::sandbox`]).

use super::CliConfig;

/// How Kernel talks to a configured CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliKind {
    /// Claude Code (`claude -p …`): `… -- <task>`, the answer is its output.
    ClaudeCode,
    /// Codex (`codex exec …`): also `-C <cwd>` and `--output-last-message <file>`; the answer is
    /// read from that file (fallback: its output).
    Codex,
    /// Anything else: `command + args + [task]`.
    Other,
}

impl CliKind {
    /// The kind of `cli`: by its section name (`claude_code`, `codex`), else by the command's
    /// file name (`claude`, `codex`, with any extension).
    pub fn of(cli: &CliConfig) -> CliKind {
        match cli.name.as_str() {
            "claude_code" => return CliKind::ClaudeCode,
            "codex" => return CliKind::Codex,
            _ => {}
        }
        // Either separator: a Windows config may name `C:\npm\codex.cmd`.
        let file = cli.command.rsplit(['/', '\\']).next().unwrap_or_default();
        let stem = file.split('.').next().unwrap_or_default();
        match stem {
            "claude" => CliKind::ClaudeCode,
            "codex" => CliKind::Codex,
            _ => CliKind::Other,
        }
    }
}
