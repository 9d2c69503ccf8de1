//! `[approvals]` (mode, timeout) and an MCP server's `approval` value.

use std::time::Duration;

use super::{Ctx, given};
use crate::config::approvals::{
    ApprovalMode, ApprovalsConfig, DEFAULT_APPROVAL_TIMEOUT, MAX_APPROVAL_TIMEOUT_SECS, McpApproval,
};
use crate::config::raw::RawApprovals;

/// The validated `[approvals]` (defaults when the section is absent).
pub(super) fn approvals(ctx: &mut Ctx<'_>, raw: Option<&RawApprovals>) -> ApprovalsConfig {
    let Some(raw) = raw else {
        return ApprovalsConfig::default();
    };
    let mode = match given(raw.mode.as_deref()).map(str::trim) {
        None | Some("untrusted") => ApprovalMode::Untrusted,
        Some("always") => ApprovalMode::Always,
        Some("off") => ApprovalMode::Off,
        Some(other) => {
            ctx.refuse(format!(
                "approvals.mode = \"{other}\" is unknown: use \"untrusted\" (the default), \
                 \"always\" or \"off\""
            ));
            ApprovalMode::Untrusted
        }
    };
    let timeout = match raw.timeout_secs {
        None => DEFAULT_APPROVAL_TIMEOUT,
        Some(secs) if (1..=MAX_APPROVAL_TIMEOUT_SECS).contains(&secs) => Duration::from_secs(secs),
        Some(secs) => {
            ctx.refuse(format!(
                "approvals.timeout_secs = {secs} is out of range: use 1 to \
                 {MAX_APPROVAL_TIMEOUT_SECS} seconds (default 600)"
            ));
            DEFAULT_APPROVAL_TIMEOUT
        }
    };
    ApprovalsConfig { mode, timeout }
}

/// An MCP server's `approval` (`key` names the server in the message).
pub(super) fn mcp_approval(ctx: &mut Ctx<'_>, key: &str, raw: Option<&str>) -> McpApproval {
    match given(raw).map(str::trim) {
        None | Some("auto") => McpApproval::Auto,
        Some("always") => McpApproval::Always,
        Some("never") => McpApproval::Never,
        Some(other) => {
            ctx.refuse(format!(
                "{key}: approval = \"{other}\" is unknown: use \"auto\" (ask unless the tool is \
                 annotated read-only; the default), \"always\" or \"never\""
            ));
            McpApproval::Auto
        }
    }
}
