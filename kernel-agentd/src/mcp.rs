//! The MCP client: every `[[mcp.servers]]` entry connected in the background (never blocking
//! start-up), its tools registered as `mcp_{server}__{tool}` and kept in step with the server
//! (reconnect with backoff, disable, `tools/list_changed`), and each server's state for
//! `GetStatus`.
//!
//! One supervisor task per server ([`server`]); tools ([`tool`]) reach the server's live
//! connection through the state they share with it.

mod connect;
mod naming;
mod reason;
mod result;
mod server;
mod shared;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use kernel_common::Config;
use kernel_common::config::{
    DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_CONNECT_TIMEOUT, McpApproval, McpServerConfig,
};
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::TaskTracker;

use crate::tools::ToolRegistry;

pub use naming::exposed_name;
pub use result::{MAX_RESULT_CHARS, external_marker};

/// Timing of connections and calls; a server's own `connect_timeout_secs` / `call_timeout_secs`
/// win over the timeouts here ([`McpSettings::for_server`]).
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// Longest wait to connect, initialise and list tools (default 10 s), unless the server sets
    /// its own.
    pub connect_timeout: Duration,
    /// Longest wait for one tool call (default 120 s), unless the server sets its own.
    pub call_timeout: Duration,
    /// First wait before reconnecting (default 1 s); it doubles per failure…
    pub backoff_initial: Duration,
    /// …up to this (default 60 s), which is also the slow retry rate once disabled.
    pub backoff_max: Duration,
    /// Failed attempts in a row after which the server's tools are disabled (default 6).
    pub reconnect_tries: u32,
    /// The server's `approval`: which of its tools are risky actions.
    pub approval: McpApproval,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: DEFAULT_MCP_CONNECT_TIMEOUT,
            call_timeout: DEFAULT_MCP_CALL_TIMEOUT,
            backoff_initial: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            reconnect_tries: 6,
            approval: McpApproval::Auto,
        }
    }
}

impl McpSettings {
    /// These settings with `server`'s own `connect_timeout_secs` / `call_timeout_secs` where set
    /// (the backoff schedule is the same for every server).
    pub fn for_server(&self, server: &McpServerConfig) -> McpSettings {
        McpSettings {
            connect_timeout: server.connect_timeout.unwrap_or(self.connect_timeout),
            call_timeout: server.call_timeout.unwrap_or(self.call_timeout),
            approval: server.approval,
            ..self.clone()
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpState {
    /// First connection in progress (or retrying before being disabled).
    Connecting,
    /// Connected; its tools are registered.
    Connected,
    /// It dropped; reconnecting (its tools stay registered and answer with an error meanwhile).
    Reconnecting,
    /// Reconnecting failed too often: its tools are removed; retried at the slow rate.
    Disabled,
    /// Not started: the config left it out (an unset `${VAR}`).
    Skipped,
}

impl McpState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Reconnecting => "reconnecting",
            Self::Disabled => "disabled",
            Self::Skipped => "skipped",
        }
    }
}

/// One server in `GetStatus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerStatus {
    pub name: String,
    pub state: McpState,
    /// Tools registered from it.
    pub tool_count: u32,
    /// Why it is not connected (redacted).
    pub detail: Option<String>,
}

/// The MCP servers of a running agent. Cheap to clone; dropping the last clone stops them.
#[derive(Clone)]
pub struct Mcp {
    inner: Arc<Inner>,
}

struct Inner {
    servers: Vec<Arc<shared::Shared>>,
    skipped: Vec<McpServerStatus>,
    /// Bumped by every server's state change; read only by `wait_until` (test support).
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    changed: Arc<watch::Sender<u64>>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    _stop_on_drop: DropGuard,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp")
            .field("servers", &self.status())
            .finish()
    }
}

impl Mcp {
    /// Starts one background task per configured server (returns at once): each connects and
    /// registers its tools in `registry`. `cancel` (or [`Mcp::shutdown`]) stops them.
    pub fn start(
        config: &Config,
        registry: ToolRegistry,
        settings: McpSettings,
        cancel: CancellationToken,
    ) -> Mcp {
        let changed = Arc::new(watch::Sender::new(0));
        let tasks = TaskTracker::new();
        let redactor = config.redactor();
        let mut servers = Vec::new();
        for cfg in &config.mcp_servers {
            let shared = Arc::new(shared::Shared::new(cfg.name.clone(), changed.clone()));
            let supervisor = server::Supervisor::new(
                cfg.clone(),
                shared.clone(),
                registry.clone(),
                settings.for_server(cfg),
                redactor.clone(),
                cancel.child_token(),
            );
            tasks.spawn(supervisor.run());
            servers.push(shared);
        }
        tasks.close();
        let skipped = config
            .skipped_mcp
            .iter()
            .map(|s| McpServerStatus {
                name: s.name.clone(),
                state: McpState::Skipped,
                tool_count: 0,
                detail: Some(s.reason.clone()),
            })
            .collect();
        Mcp {
            inner: Arc::new(Inner {
                servers,
                skipped,
                changed,
                _stop_on_drop: cancel.clone().drop_guard(),
                cancel,
                tasks,
            }),
        }
    }

    /// Every configured server (file order), then the skipped ones.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.inner
            .servers
            .iter()
            .map(|s| s.status())
            .chain(self.inner.skipped.iter().cloned())
            .collect()
    }

    /// Waits until `ready` holds for the status (checked now and after every change; test
    /// support).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn wait_until(&self, ready: impl Fn(&[McpServerStatus]) -> bool) {
        let mut rx = self.inner.changed.subscribe();
        loop {
            rx.mark_unchanged();
            if ready(&self.status()) {
                return;
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Stops every server: closes the clients, ends stdio children (reaped, no zombies).
    pub async fn shutdown(&self) {
        self.inner.cancel.cancel();
        self.inner.tasks.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_max() {
        let s = McpSettings::default();
        let secs: Vec<u64> = [1, 2, 3, 6, 7, 40, u32::MAX]
            .into_iter()
            .map(|n| s.backoff(n).as_secs())
            .collect();
        assert_eq!(secs, [1, 2, 4, 32, 60, 60, 60]);
    }

    #[test]
    fn a_servers_own_timeouts_win() {
        let base = McpSettings {
            connect_timeout: Duration::from_millis(300),
            ..McpSettings::default()
        };
        let mut server = McpServerConfig {
            name: "s".into(),
            transport: kernel_common::config::McpTransport::Stdio {
                command: "true".into(),
                args: Vec::new(),
                env: Default::default(),
            },
            connect_timeout: None,
            call_timeout: Some(Duration::from_secs(7)),
            approval: Default::default(),
        };
        let s = base.for_server(&server);
        assert_eq!(s.connect_timeout, Duration::from_millis(300));
        assert_eq!(s.call_timeout, Duration::from_secs(7));
        assert_eq!(s.backoff_max, base.backoff_max);
        server.connect_timeout = Some(Duration::from_secs(3));
        assert_eq!(
            base.for_server(&server).connect_timeout,
            Duration::from_secs(3)
        );
    }

    #[test]
    fn states_have_their_wire_names() {
        let names: Vec<&str> = [
            McpState::Connecting,
            McpState::Connected,
            McpState::Reconnecting,
            McpState::Disabled,
            McpState::Skipped,
        ]
        .into_iter()
        .map(McpState::as_str)
        .collect();
        assert_eq!(
            names,
            [
                "connecting",
                "connected",
                "reconnecting",
                "disabled",
                "skipped"
            ]
        );
    }
}
