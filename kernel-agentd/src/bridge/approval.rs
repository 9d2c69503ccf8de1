//! The owner's decision on a permission request from a delegated CLI (`approve`):
//! [`OwnerApproval`] is the seam; [`AsksApproval`] puts the request to the owner as an
//! `ask_user` question with Allow/Deny options (buttons). It is meant to be replaced by the
//! approvals service (issue 35's `[approvals]`) when that exists.

use kernel_common::config::Locale;
use serde_json::{Value, json};

use crate::tools::{ToolContext, ToolRegistry};

/// The longest part of a tool's input shown to the owner (the full length is stated).
const MAX_SHOWN_CHARS: usize = 1500;

/// What a CLI asks permission for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The configured CLI's name.
    pub cli: String,
    /// The tool it wants to run (`Bash`, `WebFetch`, …).
    pub tool: String,
    /// The tool's input.
    pub input: Value,
}

/// The owner's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Denied, with the message the CLI gets.
    Deny(String),
}

/// Decides permission requests; waits on `ctx.cancel`.
#[async_trait::async_trait]
pub trait OwnerApproval: Send + Sync {
    async fn decide(
        &self,
        request: &ApprovalRequest,
        ctx: &ToolContext,
        locale: Locale,
    ) -> Decision;
}

/// Asks the owner with Kernel's `ask_user` tool (options Allow / Deny).
#[derive(Debug, Clone)]
pub(crate) struct AsksApproval {
    pub tools: ToolRegistry,
}

fn labels(locale: Locale) -> (&'static str, &'static str) {
    match locale {
        Locale::Zh => ("允许", "拒绝"),
        Locale::En => ("Allow", "Deny"),
    }
}

/// The question the owner reads: which CLI wants to run what, the input cut at
/// [`MAX_SHOWN_CHARS`] with the full length stated.
pub(super) fn question(request: &ApprovalRequest, locale: Locale) -> String {
    // A shell command is shown as it will run; any other input as its JSON.
    let shown = match request.input.get("command").and_then(Value::as_str) {
        Some(command) => command.to_owned(),
        None => request.input.to_string(),
    };
    let total = shown.chars().count();
    let cut = if total > MAX_SHOWN_CHARS {
        let head: String = shown.chars().take(MAX_SHOWN_CHARS).collect();
        match locale {
            Locale::Zh => format!("{head}…（共 {total} 个字符）"),
            Locale::En => format!("{head}… ({total} characters in all)"),
        }
    } else {
        shown
    };
    match locale {
        Locale::Zh => format!(
            "{} 请求运行 {}：\n{cut}\n是否允许？",
            request.cli, request.tool
        ),
        Locale::En => format!(
            "{} asks to run {}:\n{cut}\nAllow it?",
            request.cli, request.tool
        ),
    }
}

#[async_trait::async_trait]
impl OwnerApproval for AsksApproval {
    async fn decide(
        &self,
        request: &ApprovalRequest,
        ctx: &ToolContext,
        locale: Locale,
    ) -> Decision {
        let (allow, deny) = labels(locale);
        let input = json!({"question": question(request, locale), "options": [allow, deny]});
        let out = self.tools.call("ask_user", input, ctx.clone()).await;
        if !out.is_error && out.content == allow {
            Decision::Allow
        } else if out.is_error || out.content == crate::ask::NO_ANSWER {
            Decision::Deny("not answered by the owner".into())
        } else {
            Decision::Deny("denied by the owner".into())
        }
    }
}
