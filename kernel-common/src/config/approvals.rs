//! `[approvals]`: when a risky action (a CLI delegation, a file sent, a scheduled task, an MCP
//! tool that may change something, a side-effecting skill) waits for the owner's tap, and how
//! long it waits; and an MCP server's own `approval` override.

use std::time::Duration;

/// `approvals.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Risky actions ask once content from outside the owner entered the turn (the default).
    #[default]
    Untrusted,
    /// Every risky action asks.
    Always,
    /// Nothing asks.
    Off,
}

impl ApprovalMode {
    /// The value as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::Always => "always",
            Self::Off => "off",
        }
    }
}

/// `[approvals]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsConfig {
    pub mode: ApprovalMode,
    /// `timeout_secs`: an unanswered approval is denied after this long (default 10 minutes).
    pub timeout: Duration,
}

/// `approvals.timeout_secs` when unset: 10 minutes.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest `approvals.timeout_secs` accepted: one day.
pub const MAX_APPROVAL_TIMEOUT_SECS: u64 = 86_400;

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            mode: ApprovalMode::default(),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
        }
    }
}

/// An MCP server's `approval`: whether its tools count as risky.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpApproval {
    /// A tool is risky unless the server annotates it `readOnlyHint` (the default).
    #[default]
    Auto,
    /// Every tool of the server is risky.
    Always,
    /// No tool of the server is risky (the owner trusts it).
    Never,
}
