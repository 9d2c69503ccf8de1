//! The tool registry interface: the `Tool` trait and `ToolRegistry` (register, list specs in a
//! stable order, look up, call safely).
//!
//! Concrete tools (memory, CLI delegation, MCP) register themselves here in later issues. A call
//! through [`ToolRegistry::call`] never fails the turn: an unknown tool, input that does not match
//! the tool's schema, or a panicking tool all become `is_error` results for the model to read.

mod events;
pub mod notify_owner;
mod validate;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use futures::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::conversation::ToolSpec;

pub use events::{ApprovalShown, ToolEvent, ToolEvents};
pub use validate::check_input;

/// Longest tool name the providers accept.
const MAX_NAME_LEN: usize = 64;

/// What a tool gets besides its input.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    /// Cancelled when the owner cancels the turn (or the daemon shuts down): stop promptly,
    /// kill subprocesses.
    pub cancel: CancellationToken,
    /// The model's id for this call.
    pub call_id: String,
    /// The session the turn belongs to.
    pub session_id: i64,
    /// Progress the caller should see now (forwarded as turn events); the default drops it.
    pub events: ToolEvents,
    /// The turn has read content from outside the owner by now (a forward, a document, an
    /// MCP result, a watched page): what the tool sends the owner (`send_file`) carries the
    /// mark, so a reply to it is outside content too.
    pub outside_content: bool,
    /// Set by a tool that took in outside content the turn did not know of (an `ask_user`
    /// answer the owner forwarded): the turn is outside content from then on.
    pub took_outside: OutsideMark,
}

/// A flag a tool raises when what it took in came from outside the owner; a cheap `Clone`
/// handle shared with the turn that called it.
#[derive(Debug, Clone, Default)]
pub struct OutsideMark(Arc<AtomicBool>);

impl OutsideMark {
    /// Marks the turn outside content.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a tool raised it.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A tool's answer, fed back to the model as a `ToolResult`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed result; `message` is wrapped as `{"error": message}`.
    pub fn error(message: impl AsRef<str>) -> Self {
        Self {
            content: json!({ "error": message.as_ref() }).to_string(),
            is_error: true,
        }
    }
}

/// A tool the model may call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + std::fmt::Debug {
    /// Unique name matching `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the input object (read once, at registration).
    fn input_schema(&self) -> Value;
    /// Runs the tool. `input` already matches the schema. Must return promptly once
    /// `ctx.cancel` is cancelled.
    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput;
    /// Whether the tool only reads (no side effects): read-only calls of one step run
    /// concurrently; the rest run alone, in order.
    fn read_only(&self) -> bool {
        false
    }
    /// Whether this call is a risky action the owner may have to approve (`[approvals]`), and
    /// what exactly it will do. `None` (the default): it is not.
    fn risk(&self, _input: &Value) -> Option<Risk> {
        None
    }
    /// Whether the tool's results are content from outside the owner (an MCP server's answer):
    /// once one entered a turn, the turn is untrusted.
    fn brings_outside_content(&self) -> bool {
        false
    }
}

/// The most characters of any tool result the model gets. The CLI and MCP cut their own output
/// at 50 000 first, in their own way (their JSON stays whole below this); this catches every
/// other tool (e.g. `skill_read`'s files of up to 256 KB).
pub const MAX_TOOL_RESULT_CHARS: usize = 64_000;

/// `output` cut to [`MAX_TOOL_RESULT_CHARS`] characters, with a note telling the model what
/// was cut.
fn capped(output: ToolOutput) -> ToolOutput {
    let total = output.content.chars().count();
    if total <= MAX_TOOL_RESULT_CHARS {
        return output;
    }
    let kept = kernel_common::text::head(&output.content, MAX_TOOL_RESULT_CHARS);
    ToolOutput {
        content: format!(
            "{kept}\n\n[result cut: {total} characters, only the first {MAX_TOOL_RESULT_CHARS} are shown; ask for less (a narrower query, a smaller file or range) if you need the rest]"
        ),
        is_error: output.is_error,
    }
}

/// A risky call, as the owner sees it before approving it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// What kind of action: the tool's name (also the scope of "allow for this session").
    pub action: String,
    /// What will run, in plain text (the CLI, the task, the arguments); clients escape it.
    pub text: String,
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("invalid tool name {0:?}: use 1-64 characters of a-z, A-Z, 0-9, _ and -")]
    InvalidName(String),
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    #[error("the input schema of tool {0:?} must be a JSON object with \"type\": \"object\"")]
    InvalidSchema(String),
}

struct Entry {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
}

/// The registered tools; cheap to clone (clones share the same set).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Arc<RwLock<BTreeMap<String, Entry>>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`; its spec (name, description, schema) is captured now and never re-read, so
    /// the tool list stays byte-identical between turns.
    pub fn register(&self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        if !valid_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        let schema = tool.input_schema();
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(RegistryError::InvalidSchema(name));
        }
        let spec = ToolSpec {
            name: name.clone(),
            description: tool.description().to_owned(),
            input_schema: schema,
        };
        let mut tools = self.tools.write().unwrap_or_else(|e| e.into_inner());
        if tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        tools.insert(name, Entry { tool, spec });
        Ok(())
    }

    /// Removes a tool (e.g. an MCP server went away); whether it was registered.
    pub fn unregister(&self, name: &str) -> bool {
        self.tools
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
            .is_some()
    }

    /// The specs to offer the model, sorted by name (a stable order).
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|e| e.spec.clone())
            .collect()
    }

    /// The specs of the read-only tools, sorted by name (what a watch is offered).
    pub fn read_only_specs(&self) -> Vec<ToolSpec> {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        tools
            .values()
            .filter(|e| e.tool.read_only())
            .map(|e| e.spec.clone())
            .collect()
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|e| e.tool.clone())
    }

    /// Whether a call of `name` with `input` may run beside other such calls of its step: a
    /// registered read-only tool whose call is no risky action (which may need the owner's
    /// approval first). Unknown tools may not.
    pub fn runs_concurrently(&self, name: &str, input: &Value) -> bool {
        self.get(name)
            .is_some_and(|t| t.read_only() && t.risk(input).is_none())
    }

    /// Runs the tool `name` on `input`: unknown tools, schema violations and panics become
    /// `is_error` outputs; never fails.
    pub async fn call(&self, name: &str, input: Value, ctx: ToolContext) -> ToolOutput {
        let entry = {
            let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
            tools
                .get(name)
                .map(|e| (e.tool.clone(), e.spec.input_schema.clone()))
        };
        let Some((tool, schema)) = entry else {
            return ToolOutput::error(format!(
                "unknown tool {name:?}; available: {}",
                self.names().join(", ")
            ));
        };
        if let Err(problem) = check_input(&schema, &input) {
            return ToolOutput::error(format!("invalid input for {name}: {problem}"));
        }
        match std::panic::AssertUnwindSafe(tool.call(input, ctx))
            .catch_unwind()
            .await
        {
            Ok(output) => capped(output),
            Err(_) => {
                tracing::error!(tool = name, "tool panicked");
                ToolOutput::error(format!("tool {name} failed unexpectedly"))
            }
        }
    }
}

/// Whether `name` matches `^[a-zA-Z0-9_-]{1,64}$`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests;
