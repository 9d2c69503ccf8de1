//! `McpTool`: one remote tool in the registry. A call goes to the server's live connection with a
//! per-call timeout and the turn's cancellation; every failure is an `is_error` result for the
//! model. A call that finds the connection broken, or gets no answer in time, sends the
//! supervisor to reconnect; a broken call is then tried once more on the new connection (a
//! timed-out one is not: the server may still be doing it). A call that arrives while the server
//! reconnects waits for its next attempt (at most the connect timeout).

use std::sync::Arc;
use std::time::Duration;

use kernel_common::Redactor;
use kernel_common::config::McpApproval;
use rmcp::model::CallToolRequestParams;
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use super::McpSettings;
use super::McpState;
use super::shared::{Shared, ToolDef, is_transport_error};
use super::{reason, result};
use crate::tools::{Risk, Tool, ToolContext, ToolOutput};

/// A tool of an MCP server, under its exposed name.
#[derive(Debug)]
pub(super) struct McpTool {
    name: String,
    def: ToolDef,
    server: Arc<Shared>,
    call_timeout: Duration,
    /// Longest wait for the server's next connection attempt before a call gives up.
    reconnect_wait: Duration,
    redactor: Redactor,
    /// The server's `approval` setting.
    approval: McpApproval,
}

/// How one attempt of a call ended.
enum Attempt {
    Answered(ToolOutput),
    /// The connection failed under the call (closed, or a send failed); says why.
    Broken(String),
    /// The server said no (an MCP error); says why.
    Failed(String),
    TimedOut,
    Cancelled,
}

impl McpTool {
    pub(super) fn new(
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
            reconnect_wait: settings.connect_timeout,
            redactor,
            approval: settings.approval,
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

    fn read_only(&self) -> bool {
        self.def.read_only
    }

    fn risk(&self, input: &Value) -> Option<Risk> {
        let risky = match self.approval {
            McpApproval::Never => false,
            McpApproval::Always => true,
            McpApproval::Auto => !self.def.read_only,
        };
        risky.then(|| Risk {
            action: self.name.clone(),
            text: format!(
                "MCP server \"{}\", tool \"{}\"\n{}",
                self.server.name,
                self.def.remote,
                serde_json::to_string_pretty(input).unwrap_or_default()
            ),
        })
    }

    fn brings_outside_content(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let server = &self.server.name;
        let mut params = CallToolRequestParams::new(self.def.remote.clone());
        if let Value::Object(args) = input {
            params = params.with_arguments(args);
        }
        let Some((id, peer)) = self.live(0, &ctx).await else {
            return self.unavailable(&ctx);
        };
        let reason = match self.attempt(&peer, params.clone(), &ctx).await {
            Attempt::Broken(reason) => reason,
            Attempt::TimedOut => {
                // The server may be stuck: start afresh, and let the next call find the new
                // connection ready.
                self.server.mark_broken(id);
                tracing::warn!(server = %server, tool = %self.def.remote, "mcp call timed out; reconnecting");
                let _ = self.live(id, &ctx).await;
                return self.timed_out();
            }
            other => return self.finish(other),
        };
        self.server.mark_broken(id);
        tracing::warn!(server = %server, tool = %self.def.remote, %reason, "mcp call lost its connection; retrying once after reconnecting");
        let Some((again, peer)) = self.live(id, &ctx).await else {
            if ctx.cancel.is_cancelled() {
                return self.failure("cancelled".to_owned());
            }
            return self.failure(format!(
                "MCP server \"{server}\" failed: {reason}; reconnecting did not succeed yet"
            ));
        };
        match self.attempt(&peer, params, &ctx).await {
            Attempt::Broken(reason) => {
                self.server.mark_broken(again);
                self.finish(Attempt::Broken(reason))
            }
            Attempt::TimedOut => {
                self.server.mark_broken(again);
                self.timed_out()
            }
            other => self.finish(other),
        }
    }
}

impl McpTool {
    /// A live connection newer than `after` (0: any), waiting for the server's next connection
    /// attempt when there is none; `None` when that fails or takes too long, the server is
    /// disabled, or the turn was cancelled.
    async fn live(&self, after: u64, ctx: &ToolContext) -> Option<(u64, Peer<RoleClient>)> {
        if let Some(conn) = self.server.connection().filter(|(id, _)| *id > after) {
            return Some(conn);
        }
        if self.server.state() == McpState::Disabled {
            return None;
        }
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => None,
            conn = self.server.newer_connection(after, self.reconnect_wait) => conn,
        }
    }

    /// One call on `peer` within the call timeout.
    async fn attempt(
        &self,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        ctx: &ToolContext,
    ) -> Attempt {
        let call = tokio::time::timeout(self.call_timeout, peer.call_tool(params));
        let outcome = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return Attempt::Cancelled,
            outcome = call => outcome,
        };
        match outcome {
            Ok(Ok(answer)) => Attempt::Answered(result::to_output(&self.server.name, answer)),
            Ok(Err(e)) => {
                tracing::debug!(server = %self.server.name, tool = %self.def.remote, error = %self.redactor.redact(&e.to_string()), "mcp call failed");
                let reason = reason::service(&e);
                if is_transport_error(&e) {
                    Attempt::Broken(reason)
                } else {
                    Attempt::Failed(reason)
                }
            }
            Err(_) => Attempt::TimedOut,
        }
    }

    fn finish(&self, attempt: Attempt) -> ToolOutput {
        let server = &self.server.name;
        match attempt {
            Attempt::Answered(out) => out,
            Attempt::Broken(reason) | Attempt::Failed(reason) => {
                tracing::warn!(server = %server, tool = %self.def.remote, %reason, "mcp call failed");
                self.failure(format!("MCP server \"{server}\" failed: {reason}"))
            }
            Attempt::TimedOut => self.timed_out(),
            Attempt::Cancelled => self.failure("cancelled".to_owned()),
        }
    }

    fn timed_out(&self) -> ToolOutput {
        self.failure(format!(
            "MCP tool {} on server \"{}\" gave no answer within {} s",
            self.def.remote,
            self.server.name,
            self.call_timeout.as_secs()
        ))
    }

    fn unavailable(&self, ctx: &ToolContext) -> ToolOutput {
        if ctx.cancel.is_cancelled() {
            return self.failure("cancelled".to_owned());
        }
        self.failure(format!(
            "MCP server \"{}\" is {}: tool {} is unavailable right now",
            self.server.name,
            self.server.state().as_str(),
            self.def.remote
        ))
    }
}
