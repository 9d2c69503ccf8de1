//! What one MCP server's supervisor, its tools and `GetStatus` share: [`Shared`] (the live
//! connection and the status), [`ToolDef`] (a tool as the server describes it), and
//! [`is_transport_error`].

use std::sync::{Arc, Mutex};

use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use super::{McpServerStatus, McpState};

/// What the supervisor, the server's tools and `GetStatus` share.
#[derive(Debug)]
pub struct Shared {
    pub name: String,
    status: Mutex<Snapshot>,
    /// The live connection's id and peer, while connected.
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
}

impl Shared {
    pub fn new(name: String, changed: Arc<watch::Sender<u64>>) -> Self {
        Self {
            name,
            status: Mutex::new(Snapshot {
                state: McpState::Connecting,
                tool_count: 0,
                last_error: None,
            }),
            conn: Mutex::new(None),
            broken: watch::Sender::new(0),
            list_changed: Arc::new(Notify::new()),
            changed,
        }
    }

    /// The live connection, if any.
    pub fn connection(&self) -> Option<(u64, Peer<RoleClient>)> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A call on connection `id` failed at the transport: have the supervisor reconnect.
    pub fn mark_broken(&self, id: u64) {
        self.broken.send_replace(id);
    }

    /// The current state.
    pub fn state(&self) -> McpState {
        self.status.lock().unwrap_or_else(|e| e.into_inner()).state
    }

    /// For `GetStatus`.
    pub fn status(&self) -> McpServerStatus {
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
pub fn is_transport_error(e: &ServiceError) -> bool {
    matches!(
        e,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}

/// A tool as this server describes it (compared to decide whether the tool list changed).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub remote: String,
    pub description: String,
    pub schema: Value,
}
