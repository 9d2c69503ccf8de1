//! The `/status` lines saying whether each delegated CLI runs its commands in its own sandbox
//! (agentd's `GetStatus.cli_sandboxes`).

use std::fmt::Write as _;

use super::{MAX_TITLE_CHARS, Texts, escape_truncated};

/// How a CLI's sandbox stands, as agentd reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxShown {
    Sandboxed,
    Off,
    Unavailable,
    Unknown,
}

/// One CLI's sandbox for `/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxView<'a> {
    pub cli: &'a str,
    pub state: SandboxShown,
    pub workspace_writes: bool,
    pub tmp_writes: bool,
    pub network: bool,
    /// The argument responsible (off, unknown) or what the machine lacks (unavailable).
    pub detail: &'a str,
}

impl Texts {
    /// `\n沙箱：` and one line per CLI; nothing when no CLI is configured.
    pub fn sandbox_lines(self, sandboxes: &[SandboxView<'_>]) -> String {
        if sandboxes.is_empty() {
            return String::new();
        }
        let mut out = format!("\n{}", self.pick("CLI 沙箱：", "CLI sandbox:"));
        for s in sandboxes {
            let _ = write!(
                out,
                "\n  <code>{}</code> {}",
                escape_truncated(s.cli, MAX_TITLE_CHARS),
                self.sandbox_state(s)
            );
        }
        out
    }

    fn sandbox_state(self, s: &SandboxView<'_>) -> String {
        let detail = escape_truncated(s.detail, MAX_TITLE_CHARS);
        match s.state {
            SandboxShown::Sandboxed => {
                let writes = match (s.workspace_writes, s.tmp_writes) {
                    (true, true) => self.pick(
                        "仅工作区和 /tmp 可写",
                        "writes only in the workspace and /tmp",
                    ),
                    (true, false) => self.pick("仅工作区可写", "writes only in the workspace"),
                    (false, true) => self.pick("仅 /tmp 可写", "writes only in /tmp"),
                    (false, false) => self.pick("只读", "read-only"),
                };
                let network = if s.network {
                    self.pick("可联网", "network on")
                } else {
                    self.pick("不联网", "no network")
                };
                format!(
                    "{}{writes}{}{network}{}",
                    self.pick("🔒 沙箱（", "🔒 sandboxed ("),
                    self.pick("，", ", "),
                    self.pick("）", ")")
                )
            }
            SandboxShown::Off => format!(
                "{}{detail}{}",
                self.pick(
                    "⚠️ 无沙箱，命令不受限制（",
                    "⚠️ NOT sandboxed, its commands run unconfined ("
                ),
                self.pick("）", ")")
            ),
            SandboxShown::Unavailable => format!(
                "{}{detail}{}",
                self.pick(
                    "⛔ 已配置沙箱，但本机无法运行（缺少 ",
                    "⛔ sandbox configured but it cannot run here (missing "
                ),
                self.pick("）：该 CLI 拒绝运行", "): the CLI refuses to run")
            ),
            SandboxShown::Unknown => format!(
                "{}{detail}{}",
                self.pick("❔ 沙箱情况未知（", "❔ sandbox unknown ("),
                self.pick("）", ")")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_common::config::Locale;

    fn view(state: SandboxShown, detail: &str) -> SandboxView<'_> {
        SandboxView {
            cli: "codex",
            state,
            workspace_writes: true,
            tmp_writes: false,
            network: false,
            detail,
        }
    }

    #[test]
    fn each_state_is_said_plainly_in_both_languages() {
        let en = Texts::new(Locale::En);
        let zh = Texts::new(Locale::Zh);
        let on = [view(SandboxShown::Sandboxed, "")];
        assert_eq!(
            en.sandbox_lines(&on),
            "\nCLI sandbox:\n  <code>codex</code> 🔒 sandboxed (writes only in the workspace, no network)"
        );
        assert!(zh.sandbox_lines(&on).contains("仅工作区可写，不联网"));
        let off = [view(
            SandboxShown::Off,
            "--dangerously-bypass-approvals-and-sandbox",
        )];
        assert!(en.sandbox_lines(&off).contains(
            "NOT sandboxed, its commands run unconfined (--dangerously-bypass-approvals-and-sandbox)"
        ));
        assert!(zh.sandbox_lines(&off).contains("无沙箱"));
        let missing = [view(SandboxShown::Unavailable, "bwrap, socat")];
        assert!(
            en.sandbox_lines(&missing)
                .contains("cannot run here (missing bwrap, socat)")
        );
        assert!(zh.sandbox_lines(&missing).contains("缺少 bwrap, socat"));
        let odd = [view(SandboxShown::Unknown, "<b>")];
        assert!(en.sandbox_lines(&odd).contains("&lt;b&gt;"));
        assert_eq!(en.sandbox_lines(&[]), "");
    }
}
