//! The `delegate_to_cli(task, cwd=null, cli=null)` tool: its schema (generated from the input
//! type, with `cli` limited to the configured `[cli.*]` names), its description for the model,
//! and its result `{ok, cli, cwd, exit_code, output_path, output}`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{DEFAULT_CLI, DelegateRequest, Delegator};
use crate::tools::{RegistryError, Tool, ToolContext, ToolOutput, ToolRegistry};

/// The tool's name.
pub const TOOL_NAME: &str = "delegate_to_cli";

/// Registers `delegate_to_cli` on `registry`, replacing an earlier one (a registry shared across
/// agent restarts must reach the new agent). Without any `[cli.*]` section there is nothing to
/// delegate to: the tool is not offered, and the registry is left as it is (a test may provide
/// its own tool of that name).
pub fn register_tool(
    registry: &ToolRegistry,
    delegator: &Arc<Delegator>,
) -> Result<(), RegistryError> {
    if delegator.clis().is_empty() {
        tracing::info!("no [cli.*] configured: delegate_to_cli is not offered");
        return Ok(());
    }
    registry.unregister(TOOL_NAME);
    registry.register(Arc::new(DelegateTool::new(delegator.clone())))
}

/// `delegate_to_cli` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct DelegateInput {
    /// The complete, self-contained task for the CLI agent, which cannot see this conversation:
    /// goal, constraints, the paths involved, and what "done" looks like.
    task: String,
    /// Working directory: an absolute path, `~/…`, or a path relative to the default workspace.
    /// Null: the default workspace.
    #[serde(default)]
    cwd: Option<String>,
    /// Which CLI runs the task. Null: the default (claude_code). Use "codex" only when the owner
    /// asked for Codex.
    #[serde(default)]
    cli: Option<String>,
}

/// The tool; one [`Delegator`] runs every call.
#[derive(Debug)]
pub struct DelegateTool {
    delegator: Arc<Delegator>,
    description: String,
    schema: Value,
}

impl DelegateTool {
    pub fn new(delegator: Arc<Delegator>) -> Self {
        let names = delegator.clis();
        let mut schema = schemars::schema_for!(DelegateInput);
        schema.remove("$schema");
        schema.remove("title");
        let mut schema = schema.to_value();
        let mut allowed: Vec<Value> = names.iter().map(|n| Value::from(n.as_str())).collect();
        allowed.push(Value::Null);
        schema["properties"]["cli"]["enum"] = Value::Array(allowed);
        Self {
            description: description(&names),
            delegator,
            schema,
        }
    }
}

fn description(names: &[String]) -> String {
    format!(
        "Delegate hands-on work to a coding CLI agent running on the owner's machine: file \
         operations, code editing, project analysis, shell commands, browser tasks, installing \
         software — anything that needs to act rather than answer. The default CLI is \
         {DEFAULT_CLI}; pass cli=\"codex\" only when the owner asks for Codex by name. Configured \
         CLIs: {}. The CLI cannot see this conversation, so `task` must be complete on its own. \
         One delegation runs at a time; it is stopped after its time limit (default 10 minutes) \
         or when the owner cancels. Returns {{\"ok\", \"cli\", \"cwd\", \"exit_code\", \
         \"output_path\", \"output\"}}: `output` is the CLI's answer (cut in the middle when \
         longer than 50000 characters), `output_path` the file with its full output. Summarise \
         the result for the owner and mention output_path.",
        names.join(", ")
    )
}

#[async_trait::async_trait]
impl Tool for DelegateTool {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let input: DelegateInput = match serde_json::from_value(input) {
            Ok(input) => input,
            Err(e) => return ToolOutput::error(format!("invalid input: {e}")),
        };
        let request = DelegateRequest {
            task: input.task,
            cwd: input.cwd,
            cli: input.cli,
        };
        match self
            .delegator
            .delegate(request, &ctx.cancel, &ctx.events)
            .await
        {
            Ok(result) => ToolOutput {
                is_error: !result.ok,
                content: serde_json::to_string(&result).unwrap_or_default(),
            },
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}
