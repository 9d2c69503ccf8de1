//! One configured MCP server over its lifetime: the supervisor task that connects (with a
//! timeout), registers the server's tools, re-lists them on `tools/list_changed`, reconnects with
//! exponential backoff when the connection drops, disables the tools when that keeps failing and
//! keeps retrying slowly; and the state it shares with the tools and `GetStatus`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kernel_common::Redactor;
use kernel_common::config::McpServerConfig;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::connect::{self, Connection};
use super::shared::{Shared, ToolDef, is_transport_error};
use super::tool::McpTool;
use super::{McpSettings, McpState, naming, reason};
use crate::tools::ToolRegistry;

/// Longest tool description kept (some servers ship manuals).
const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// How a served connection ended.
enum End {
    Cancelled,
    Dropped,
}

/// The task that owns one server's connection.
pub(super) struct Supervisor {
    pub config: McpServerConfig,
    pub shared: Arc<Shared>,
    pub registry: ToolRegistry,
    pub settings: McpSettings,
    pub redactor: Redactor,
    pub cancel: CancellationToken,
    /// What this server has registered: exposed name → definition.
    registered: BTreeMap<String, ToolDef>,
    next_id: u64,
    /// Where the server lives ([`reason::place`]), opening every failure it reports.
    place: String,
}

impl Supervisor {
    pub(super) fn new(
        config: McpServerConfig,
        shared: Arc<Shared>,
        registry: ToolRegistry,
        settings: McpSettings,
        redactor: Redactor,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            place: reason::place(&config),
            config,
            shared,
            registry,
            settings,
            redactor,
            cancel,
            registered: BTreeMap::new(),
            next_id: 0,
        }
    }

    /// Runs until cancelled; then closes the connection (killing a stdio child).
    pub(super) async fn run(mut self) {
        let mut first = true;
        while let Some((conn, tools)) = self.connect(first).await {
            first = false;
            if let End::Cancelled = self.serve(conn, tools).await {
                break;
            }
        }
        self.shared.set_connection(None);
        tracing::debug!(server = %self.shared.name, "mcp supervisor stopped");
    }

    /// Connects and lists tools, retrying with backoff; `None` once cancelled.
    async fn connect(&mut self, first: bool) -> Option<(Connection, Vec<rmcp::model::Tool>)> {
        let mut failures: u32 = 0;
        loop {
            if self.shared.state() != McpState::Disabled {
                let state = if first {
                    McpState::Connecting
                } else {
                    McpState::Reconnecting
                };
                self.shared.update(|s| s.state = state);
            }
            let attempt = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return None,
                r = self.attempt() => r,
            };
            let error = match attempt {
                Ok(pair) => return Some(pair),
                Err(e) => self.redactor.redact(&e),
            };
            failures = failures.saturating_add(1);
            self.failed(failures, first, error);
            let delay = if self.shared.state() == McpState::Disabled {
                self.settings.backoff_max
            } else {
                self.settings.backoff(failures)
            };
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return None,
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Records a failed attempt; disables the server's tools once the tries are used up.
    fn failed(&mut self, failures: u32, first: bool, error: String) {
        let server = &self.shared.name;
        let disabled = self.shared.state() == McpState::Disabled;
        if failures == 1 && !disabled {
            let what = if first { "connect" } else { "reconnect" };
            tracing::warn!(server = %server, %error, "mcp server failed to {what}; retrying with backoff");
        } else {
            tracing::debug!(server = %server, %error, failures, "mcp connect attempt failed");
        }
        let disable = !disabled && failures >= self.settings.reconnect_tries;
        if disable {
            tracing::warn!(
                server = %server, %error, failures,
                "mcp server unreachable: its tools are disabled; retrying every {} s",
                self.settings.backoff_max.as_secs()
            );
            self.unregister_all();
        }
        self.shared.update(|s| {
            s.last_error = Some(error);
            s.failed_attempts += 1;
            if disable {
                s.state = McpState::Disabled;
                s.tool_count = 0;
            }
        });
    }

    /// One connection attempt: open, initialise, list tools — all within the connect timeout.
    /// The error says in words where and what failed ("mcp.exa.ai: name not resolved").
    async fn attempt(&self) -> Result<(Connection, Vec<rmcp::model::Tool>), String> {
        let limit = self.settings.connect_timeout;
        let place = &self.place;
        let open = connect::open(
            &self.config,
            self.shared.list_changed.clone(),
            &self.redactor,
        );
        let conn = tokio::time::timeout(limit, open)
            .await
            .map_err(|_| format!("{place}: no answer within {} s", limit.as_secs_f32()))?
            .map_err(|e| format!("{place}: {e}"))?;
        match tokio::time::timeout(limit, conn.peer.list_all_tools()).await {
            Ok(Ok(tools)) => Ok((conn, tools)),
            Ok(Err(e)) => {
                conn.close().await;
                Err(format!(
                    "{place}: listing tools failed: {}",
                    reason::service(&e)
                ))
            }
            Err(_) => {
                conn.close().await;
                Err(format!(
                    "{place}: listing tools took over {} s",
                    limit.as_secs_f32()
                ))
            }
        }
    }

    /// Uses `conn` until it drops, a call finds it broken, or shutdown.
    async fn serve(&mut self, mut conn: Connection, tools: Vec<rmcp::model::Tool>) -> End {
        self.next_id += 1;
        let id = self.next_id;
        self.sync_tools(tools);
        self.shared.set_connection(Some((id, conn.peer.clone())));
        let count = self.registered.len() as u32;
        self.shared.update(|s| {
            s.state = McpState::Connected;
            s.tool_count = count;
            s.last_error = None;
        });
        tracing::info!(server = %self.shared.name, tools = count, "mcp server connected");
        let mut broken = self.shared.broken.subscribe();
        let reason = loop {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => {
                    self.shared.set_connection(None);
                    conn.close().await;
                    return End::Cancelled;
                }
                () = conn.closed() => break "the connection closed".to_owned(),
                () = broken_at(&mut broken, id) => {
                    break "a call found the connection broken or stuck".to_owned();
                }
                () = self.shared.list_changed.notified() => {
                    if let Err(e) = self.relist(&conn).await {
                        break e;
                    }
                }
            }
        };
        self.shared.set_connection(None);
        tracing::warn!(server = %self.shared.name, %reason, "mcp server dropped; reconnecting");
        self.shared.update(|s| {
            s.state = McpState::Reconnecting;
            s.last_error = Some(reason);
        });
        conn.close().await;
        End::Dropped
    }

    /// Re-lists after `tools/list_changed`; `Err` when the connection is gone.
    async fn relist(&mut self, conn: &Connection) -> Result<(), String> {
        let limit = self.settings.connect_timeout;
        match tokio::time::timeout(limit, conn.peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                self.sync_tools(tools);
                let count = self.registered.len() as u32;
                self.shared.update(|s| s.tool_count = count);
                Ok(())
            }
            Ok(Err(e)) if is_transport_error(&e) => {
                Err(format!("listing tools failed: {}", reason::service(&e)))
            }
            Ok(Err(e)) => {
                let e = self.redactor.redact(&reason::service(&e));
                tracing::warn!(server = %self.shared.name, error = %e, "mcp re-listing tools failed");
                Ok(())
            }
            Err(_) => {
                tracing::warn!(server = %self.shared.name, "mcp re-listing tools timed out");
                Ok(())
            }
        }
    }

    /// Makes the registry hold exactly `tools`, touching only what changed (so the tool list
    /// stays byte-identical between turns while the server's tools do).
    fn sync_tools(&mut self, tools: Vec<rmcp::model::Tool>) {
        let server = self.shared.name.clone();
        let defs: BTreeMap<String, ToolDef> = tools
            .into_iter()
            .map(|t| (t.name.to_string(), tool_def(&server, t)))
            .collect();
        let names = naming::assign(&server, defs.keys().map(String::as_str), |n| {
            !self.registered.contains_key(n) && self.registry.get(n).is_some()
        });
        let wanted: BTreeMap<String, ToolDef> = names
            .into_iter()
            .filter_map(|(exposed, remote)| defs.get(&remote).map(|d| (exposed, d.clone())))
            .collect();
        if wanted == self.registered {
            return;
        }
        for (name, def) in &self.registered {
            if wanted.get(name) != Some(def) {
                self.registry.unregister(name);
            }
        }
        let old = std::mem::take(&mut self.registered);
        for (name, def) in wanted {
            if old.get(&name) == Some(&def) {
                self.registered.insert(name, def);
                continue;
            }
            let tool = McpTool::new(
                name.clone(),
                def.clone(),
                self.shared.clone(),
                &self.settings,
                self.redactor.clone(),
            );
            match self.registry.register(Arc::new(tool)) {
                Ok(()) => {
                    self.registered.insert(name, def);
                }
                Err(e) => tracing::warn!(server = %server, error = %e, "mcp tool not registered"),
            }
        }
        tracing::info!(server = %server, tools = self.registered.len(), "mcp tools registered");
    }

    fn unregister_all(&mut self) {
        for name in std::mem::take(&mut self.registered).keys() {
            self.registry.unregister(name);
        }
    }
}

/// Resolves once a call has marked connection `id` broken.
async fn broken_at(rx: &mut watch::Receiver<u64>, id: u64) {
    let seen = rx.wait_for(|b| *b == id).await.map(|_| ()).is_ok();
    if !seen {
        // The sender lives as long as the server's state; never spin if it is gone.
        std::future::pending::<()>().await;
    }
}

/// Our definition of an MCP tool: description marked with its server, schema an object.
fn tool_def(server: &str, tool: rmcp::model::Tool) -> ToolDef {
    let text = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or("(no description)");
    let text = kernel_common::text::head(text, MAX_DESCRIPTION_CHARS).to_owned();
    let mut schema = (*tool.input_schema).clone();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        schema.insert("type".to_owned(), Value::from("object"));
    }
    let read_only = tool
        .annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false);
    ToolDef {
        remote: tool.name.to_string(),
        description: format!("[MCP server \"{server}\"] {text}"),
        schema: Value::Object(schema),
        read_only,
    }
}

impl McpSettings {
    /// The wait after `failures` failed attempts: initial × 2^(failures−1), at most the max.
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        self.backoff_initial
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}
