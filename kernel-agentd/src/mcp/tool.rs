//! `McpTool`: one remote tool in the registry. A call goes to the server's live connection with a
//! per-call timeout and the turn's cancellation; every failure is an `is_error` result for the
//! model, and a failure of the connection itself sends the supervisor to reconnect.

use std::sync::Arc;
use std::time::Duration;

use kernel_common::Redactor;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;

use super::McpSettings;
use super::result;
use super::shared::{Shared, ToolDef, is_transport_error};
use crate::tools::{Tool, ToolContext, ToolOutput};

/// A tool of an MCP server, under its exposed name.
#[derive(Debug)]
pub struct McpTool {
    name: String,
    def: ToolDef,
    server: Arc<Shared>,
    call_timeout: Duration,
    redactor: Redactor,
}

impl McpTool {
    pub fn new(
        name: String,
        def: ToolDef,
        server: Arc<Shared>,
        settings: &McpSettings,
        redactor: Redactor,
    ) -> Self {
        Self {
            name,
            def,
            server,
            call_timeout: settings.call_timeout,
            redactor,
        }
    }

    fn failure(&self, what: String) -> ToolOutput {
        let text = format!(
            "{}\n{}",
            result::external_marker(&self.server.name),
            self.redactor.redact(&what)
        );
        ToolOutput::error(text)
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn input_schema(&self) -> Value {
        self.def.schema.clone()
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let server = &self.server.name;
        let Some((id, peer)) = self.server.connection() else {
            return self.failure(format!(
                "MCP server \"{server}\" is {}: tool {} is unavailable right now",
                self.server.state().as_str(),
                self.def.remote
            ));
        };
        let mut params = CallToolRequestParams::new(self.def.remote.clone());
        if let Value::Object(args) = input {
            params = params.with_arguments(args);
        }
        let call = tokio::time::timeout(self.call_timeout, peer.call_tool(params));
        let outcome = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return self.failure("cancelled".to_owned()),
            outcome = call => outcome,
        };
        match outcome {
            Ok(Ok(answer)) => result::to_output(server, answer),
            Ok(Err(e)) => {
                if is_transport_error(&e) {
                    self.server.mark_broken(id);
                }
                tracing::warn!(server = %server, tool = %self.def.remote, error = %self.redactor.redact(&e.to_string()), "mcp call failed");
                self.failure(format!("MCP server \"{server}\" failed: {e}"))
            }
            Err(_) => self.failure(format!(
                "MCP tool {} on server \"{server}\" gave no answer within {} s",
                self.def.remote,
                self.call_timeout.as_secs()
            )),
        }
    }
}
