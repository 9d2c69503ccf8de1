//! What one MCP server's supervisor, its tools and `GetStatus` share: [`Shared`] (the live
//! connection and the status), [`ToolDef`] (a tool as the server describes it), and
//! [`is_transport_error`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use super::{McpServerStatus, McpState};

/// What the supervisor, the server's tools and `GetStatus` share.
#[derive(Debug)]
pub(super) struct Shared {
    pub name: String,
    pub(super) status: Mutex<Snapshot>,
    /// The live connection's id and peer, while connected (ids grow with every connection).
    conn: Mutex<Option<(u64, Peer<RoleClient>)>>,
    /// The id of the last connection a call found broken (the supervisor then reconnects).
    pub(super) broken: watch::Sender<u64>,
    pub(super) list_changed: Arc<Notify>,
    /// Bumped on every status change (shared by all servers).
    changed: Arc<watch::Sender<u64>>,
}

#[derive(Debug, Clone)]
pub(super) struct Snapshot {
    pub(super) state: McpState,
    pub(super) tool_count: u32,
    pub(super) last_error: Option<String>,
    /// Failed connection attempts so far (never reset).
    pub(super) failed_attempts: u64,
}

impl Shared {
    pub(super) fn new(name: String, changed: Arc<watch::Sender<u64>>) -> Self {
        Self {
            name,
            status: Mutex::new(Snapshot {
                state: McpState::Connecting,
                tool_count: 0,
                last_error: None,
                failed_attempts: 0,
            }),
            conn: Mutex::new(None),
            broken: watch::Sender::new(0),
            list_changed: Arc::new(Notify::new()),
            changed,
        }
    }

    /// The live connection, if any.
    pub(super) fn connection(&self) -> Option<(u64, Peer<RoleClient>)> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits for a live connection newer than connection `after` (0: any) from the server's
    /// next connection attempt; `None` when that attempt fails, the server is disabled, or
    /// nothing came within `limit`.
    pub(super) async fn newer_connection(
        &self,
        after: u64,
        limit: Duration,
    ) -> Option<(u64, Peer<RoleClient>)> {
        // Subscribed before looking: a change after the look is still seen.
        let mut changed = self.changed.subscribe();
        let failed_before = self.snapshot().failed_attempts;
        let wait = async {
            loop {
                if let Some(conn) = self.connection().filter(|(id, _)| *id > after) {
                    return Some(conn);
                }
                let now = self.snapshot();
                if now.state == McpState::Disabled || now.failed_attempts > failed_before {
                    return None;
                }
                if changed.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.ok().flatten()
    }

    /// A call on connection `id` failed at the transport: have the supervisor reconnect.
    pub(super) fn mark_broken(&self, id: u64) {
        self.broken.send_replace(id);
    }

    /// The current state.
    pub(super) fn state(&self) -> McpState {
        self.snapshot().state
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// For `GetStatus`.
    pub(super) fn status(&self) -> McpServerStatus {
        let s = self
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        McpServerStatus {
            name: self.name.clone(),
            state: s.state,
            tool_count: s.tool_count,
            detail: s.last_error,
        }
    }

    pub(super) fn update(&self, edit: impl FnOnce(&mut Snapshot)) {
        edit(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(super) fn set_connection(&self, conn: Option<(u64, Peer<RoleClient>)>) {
        *self.conn.lock().unwrap_or_else(|e| e.into_inner()) = conn;
    }
}

/// Whether `e` means the connection itself is gone (rather than the server refusing a request).
pub(super) fn is_transport_error(e: &ServiceError) -> bool {
    matches!(
        e,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}

/// A tool as this server describes it (compared to decide whether the tool list changed).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolDef {
    pub remote: String,
    pub description: String,
    pub schema: Value,
    /// The server annotated it `readOnlyHint: true`: it changes nothing, so its calls run
    /// concurrently with other read-only calls and need no approval.
    pub read_only: bool,
}
