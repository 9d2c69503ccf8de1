//! The bridge's tools and how each call runs. `ask_owner`, `memory_search`, `remember` and
//! `send_file` are Kernel's own `ask_user`, `memory_search`, `memory_add` and `send_file`, run
//! through the [`crate::tools::ToolRegistry`] (same schema check, limits, confinement and errors) in the
//! delegating turn's context; `approve` asks the owner through [`super::OwnerApproval`];
//! `notify_owner` queues a note in the outbox, at most one per [`NOTE_INTERVAL`] per delegation
//! and at most [`MAX_NOTE_CHARS`] characters. An `ask_owner` question is at most
//! [`MAX_QUESTION_CHARS`] characters (the CLI is untrusted; Kernel's own model is not held to it).

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};

use super::approval::{ApprovalRequest, Decision};
use super::{Bridge, Session};
use crate::outbox::{ItemBody, NewItem};

/// At most one `notify_owner` note per delegation this often.
pub(super) const NOTE_INTERVAL: Duration = Duration::from_secs(10);
/// The longest note.
pub(super) const MAX_NOTE_CHARS: usize = 1000;
/// The longest `ask_owner` question (the CLI is not trusted to keep it short).
pub(super) const MAX_QUESTION_CHARS: usize = 2000;

/// Bridge tool → the Kernel tool it runs.
const OWN_TOOLS: &[(&str, &str, &str)] = &[
    (
        "ask_owner",
        "ask_user",
        "Ask the owner (the person you work for, on their phone) a question and wait for the answer: one of `options` (buttons) or their words. Use it only when you cannot go on without their decision.",
    ),
    (
        "memory_search",
        "memory_search",
        "Search the owner's long-term memories (notes Kernel keeps about them and their projects).",
    ),
    (
        "remember",
        "memory_add",
        "Add a long-term memory for the owner (a fact, preference or decision worth keeping).",
    ),
    (
        "send_file",
        "send_file",
        "Send the owner a file from the workspace (Telegram).",
    ),
];

/// The tools offered (those whose Kernel tool is registered, `approve`, and `notify_owner` when
/// there is an outbox).
pub(super) fn list(bridge: &Bridge) -> Vec<Value> {
    let specs = bridge.inner.tools.specs();
    let mut out: Vec<Value> = OWN_TOOLS
        .iter()
        .filter_map(|(name, own, description)| {
            let spec = specs.iter().find(|s| s.name == *own)?;
            Some(
                json!({"name": name, "description": description, "inputSchema": spec.input_schema}),
            )
        })
        .collect();
    out.push(json!({
        "name": "approve",
        "description": "Permission prompt: asks the owner whether a tool may run. Input: the tool's name and input. Returns {\"behavior\":\"allow\",\"updatedInput\":…} or {\"behavior\":\"deny\",\"message\":…} as JSON text.",
        "inputSchema": {"type": "object", "properties": {
            "tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}
        }, "required": ["tool_name", "input"]},
    }));
    if bridge.inner.outbox.is_some() {
        out.push(json!({
            "name": "notify_owner",
            "description": format!("Send the owner a short progress note (at most {MAX_NOTE_CHARS} characters, one every {} seconds).", NOTE_INTERVAL.as_secs()),
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }));
    }
    out
}

/// Runs bridge tool `name`: its text and whether it is an error.
pub(super) async fn call(
    bridge: &Bridge,
    session: &Session,
    name: &str,
    args: Value,
) -> (String, bool) {
    tracing::info!(delegation = %session.label, tool = name, "bridge tool call");
    if name == "ask_owner"
        && let Some(q) = args["question"].as_str()
        && q.chars().count() > MAX_QUESTION_CHARS
    {
        return (
            format!(
                "the question is {} characters long; at most {MAX_QUESTION_CHARS} are accepted",
                q.chars().count()
            ),
            true,
        );
    }
    if !session.interactive && name == "ask_owner" {
        return (
            "the owner cannot be asked from a background job: decide yourself or stop and say \
             what you need"
                .into(),
            true,
        );
    }
    if let Some((_, own, _)) = OWN_TOOLS.iter().find(|(n, _, _)| *n == name) {
        let out = bridge
            .inner
            .tools
            .call(own, args, session.ctx.clone())
            .await;
        return (out.content, out.is_error);
    }
    match name {
        "approve" => approve(bridge, session, &args).await,
        "notify_owner" if bridge.inner.outbox.is_some() => notify(bridge, session, &args).await,
        _ => (format!("unknown tool {name:?}"), true),
    }
}

async fn approve(bridge: &Bridge, session: &Session, args: &Value) -> (String, bool) {
    if !session.interactive {
        let deny = json!({"behavior": "deny", "message": "a background job cannot ask the owner"});
        return (deny.to_string(), false);
    }
    let Some(tool) = args["tool_name"].as_str().filter(|t| !t.trim().is_empty()) else {
        return ("approve needs tool_name".into(), true);
    };
    let input = args.get("input").cloned().unwrap_or_else(|| json!({}));
    let request = ApprovalRequest {
        cli: session.cli.clone(),
        tool: tool.to_owned(),
        input: input.clone(),
    };
    let decision = bridge
        .inner
        .approval
        .decide(&request, &session.ctx, bridge.inner.locale)
        .await;
    tracing::info!(delegation = %session.label, tool, allowed = matches!(decision, Decision::Allow), "approval decided");
    let answer = match decision {
        Decision::Allow => json!({"behavior": "allow", "updatedInput": input}),
        Decision::Deny(message) => json!({"behavior": "deny", "message": message}),
    };
    (answer.to_string(), false)
}

async fn notify(bridge: &Bridge, session: &Session, args: &Value) -> (String, bool) {
    let text = args["text"].as_str().unwrap_or_default().trim();
    if text.is_empty() {
        return ("the text is empty".into(), true);
    }
    let chars = text.chars().count();
    if chars > MAX_NOTE_CHARS {
        return (
            format!("the text is {chars} characters long; at most {MAX_NOTE_CHARS} are accepted"),
            true,
        );
    }
    {
        let mut last = session.last_note.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = *last
            && at.elapsed() < NOTE_INTERVAL
        {
            return (
                format!(
                    "too many notes: at most one every {} seconds",
                    NOTE_INTERVAL.as_secs()
                ),
                true,
            );
        }
        *last = Some(Instant::now());
    }
    let Some(outbox) = &bridge.inner.outbox else {
        return ("notify_owner is not available".into(), true);
    };
    let item = NewItem {
        turn_id: format!("note-{}-{}", session.label, Utc::now().timestamp_micros()),
        body: ItemBody::Notice {
            text: format!("`{}`: {text}", session.cli),
        },
        reply_to: None,
        placeholder: None,
        thread_id: None,
        // A CLI reads files and web pages: what it says is outside content.
        outside: true,
    };
    match outbox.note(item).await {
        Ok(_) => ("sent".into(), false),
        Err(e) => {
            tracing::warn!(delegation = %session.label, error = %e, "cannot queue a note");
            ("the note could not be stored".into(), true)
        }
    }
}
