//! The `delegate_to_cli(task, cwd=null, cli=null, background=false)` tool: its schema (generated
//! from the input type, with `cli` limited to the configured `[cli.*]` names), its description for
//! the model, and its result `{ok, cli, cwd, exit_code, output_path, output}` — or, in the
//! background, `{ok, background, job_id}` at once (a [`Background`] runner runs the job).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{DEFAULT_CLI, DelegateRequest, Delegator};
use crate::tools::{RegistryError, Risk, Tool, ToolContext, ToolOutput, ToolRegistry};

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

/// [`register_tool`] with `background = true` handed to `background`.
pub fn register_background_tool(
    registry: &ToolRegistry,
    delegator: &Arc<Delegator>,
    background: Arc<dyn Background>,
) -> Result<(), RegistryError> {
    if delegator.clis().is_empty() {
        tracing::info!("no [cli.*] configured: delegate_to_cli is not offered");
        return Ok(());
    }
    registry.unregister(TOOL_NAME);
    let mut tool = DelegateTool::new(delegator.clone());
    tool.background = Some(background);
    registry.register(Arc::new(tool))
}

/// Runs a delegation in the background (the `jobs` service): checks it, starts it and returns
/// its job id at once, or says why it cannot run.
#[async_trait::async_trait]
pub trait Background: Send + Sync + std::fmt::Debug {
    async fn start(&self, request: DelegateRequest) -> Result<i64, String>;
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
    /// True: run it as a background job and return at once with its job id; the owner is told
    /// the result when it ends (use for long work the owner need not wait for). Default false.
    #[serde(default)]
    background: bool,
}

/// The tool; one [`Delegator`] runs every call.
#[derive(Debug)]
pub struct DelegateTool {
    delegator: Arc<Delegator>,
    description: String,
    schema: Value,
    background: Option<Arc<dyn Background>>,
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
            background: None,
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
         the result for the owner and mention output_path. With background=true it returns at \
         once with {{\"ok\", \"background\", \"job_id\"}}: tell the owner it started; the result \
         comes back by itself when the job ends (the owner lists jobs with /jobs).",
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

    fn risk(&self, input: &Value) -> Option<Risk> {
        let input: DelegateInput = serde_json::from_value(input.clone()).ok()?;
        let cli = input.cli.as_deref().unwrap_or(DEFAULT_CLI);
        let cwd = input.cwd.as_deref().unwrap_or("(the default workspace)");
        let how = if input.background {
            "background job"
        } else {
            "foreground"
        };
        Some(Risk {
            action: TOOL_NAME.to_owned(),
            text: format!("CLI: {cli} ({how})\ncwd: {cwd}\ntask:\n{}", input.task),
        })
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
            background: false,
            session_id: Some(ctx.session_id),
        };
        if let Some(background) = self.background.as_ref().filter(|_| input.background) {
            let request = DelegateRequest {
                background: true,
                ..request
            };
            return match background.start(request).await {
                Ok(job_id) => ToolOutput::ok(
                    serde_json::json!({"ok": true, "background": true, "job_id": job_id})
                        .to_string(),
                ),
                Err(e) => ToolOutput::error(e),
            };
        }
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
