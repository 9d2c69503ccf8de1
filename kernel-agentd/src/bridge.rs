//! `Bridge`: Kernel as an MCP server for the coding CLIs it delegates to. One streamable-HTTP
//! endpoint on `127.0.0.1:<ephemeral>/mcp` inside agentd; each delegation gets a [`Lease`] — a
//! random bearer token (32 OS-random bytes, hex) valid only while the lease lives, i.e. while
//! that delegation runs — which Kernel passes to the CLI (Claude Code `--mcp-config`, Codex
//! `mcp_servers.kernel` with the token in an environment variable). A request without a live
//! token is refused (401) before its body is read as JSON-RPC.
//!
//! The tools ([`tools`]): `ask_owner`, `approve` (Claude Code's `--permission-prompt-tool`),
//! `notify_owner`, `memory_search`, `remember`, `send_file` — the last three and `ask_owner` are
//! Kernel's own tools run through the tool registry with the delegating turn's context, so they
//! keep their rules, limits and confinement. Every call is logged with the delegation (CLI
//! name and lease number) it came from; nothing else of Kernel is reachable.

mod approval;
mod mcp;
mod tools;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kernel_common::config::Locale;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::outbox::NewItem;
use crate::tools::{ToolContext, ToolRegistry};

pub(crate) use approval::{AsksApproval, OwnerApproval};

/// The server's name in the CLIs' MCP configuration: its tools are `mcp__kernel__<tool>`.
pub(crate) const SERVER_NAME: &str = "kernel";
/// The environment variable that carries the token to Codex (`bearer_token_env_var`).
pub(crate) const TOKEN_ENV: &str = "KERNEL_MCP_TOKEN";
/// The largest request body accepted.
pub(crate) const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The endpoint and its live delegations; a cheap `Clone` handle.
#[derive(Clone)]
pub struct Bridge {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("addr", &self.inner.addr)
            .finish_non_exhaustive()
    }
}

struct Inner {
    addr: SocketAddr,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next: AtomicU64,
    tools: ToolRegistry,
    outbox: Option<Arc<dyn NoteSink>>,
    approval: Arc<dyn OwnerApproval>,
    locale: Locale,
}

/// Where `notify_owner` notes go: the outbox (any `Outbox<E>`).
#[async_trait::async_trait]
pub trait NoteSink: Send + Sync {
    /// Stores `item` for delivery.
    async fn note(&self, item: NewItem) -> Result<(), String>;
}

#[async_trait::async_trait]
impl<E: Clone + Send + Sync + 'static> NoteSink for crate::outbox::Outbox<E> {
    async fn note(&self, item: NewItem) -> Result<(), String> {
        self.queue(item)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// One running delegation's side of the bridge.
pub(crate) struct Session {
    /// `<cli>#<n>`: the CLI's name and the lease's number, in every log line.
    pub label: String,
    pub cli: String,
    /// The delegating turn's context (its cancellation and events: questions reach the owner).
    pub ctx: ToolContext,
    /// A turn's delegation (the owner sees its questions); a background job's is not: there
    /// `ask_owner` is refused and `approve` denies, so no hidden question takes the owner's
    /// next message as its answer.
    pub interactive: bool,
    /// When the last `notify_owner` note was queued.
    pub last_note: Mutex<Option<Instant>>,
}

/// Where a delegation reaches the bridge; the token dies with it.
#[derive(Debug)]
pub struct Lease {
    bridge: Bridge,
    token: String,
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
}

impl Lease {
    /// The bearer token (a secret: never logged).
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let gone = self.bridge.sessions().remove(&self.token);
        if let Some(s) = gone {
            tracing::debug!(delegation = %s.label, "bridge token revoked");
        }
    }
}

impl Bridge {
    /// Binds `127.0.0.1:0` and serves on `tasks` until `cancel`. `outbox` carries
    /// `notify_owner` notes (none: the tool is not offered); `approval` decides `approve`.
    pub async fn start(
        tools: ToolRegistry,
        outbox: Option<Arc<dyn NoteSink>>,
        approval: Arc<dyn OwnerApproval>,
        locale: Locale,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> std::io::Result<Bridge> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let bridge = Bridge {
            inner: Arc::new(Inner {
                addr,
                sessions: Mutex::new(HashMap::new()),
                next: AtomicU64::new(0),
                tools,
                outbox,
                approval,
                locale,
            }),
        };
        let app = Router::new()
            .route(
                "/mcp",
                axum::routing::post(handle)
                    .get(not_allowed)
                    .delete(not_allowed),
            )
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .with_state(bridge.clone());
        tasks.spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(cancel.cancelled_owned())
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "the MCP bridge stopped");
            }
        });
        tracing::info!(%addr, "MCP bridge for delegated CLIs listening on loopback");
        Ok(bridge)
    }

    /// A lease for one delegation of `cli`, running in the turn of `ctx` (`interactive`) or in a
    /// background job.
    pub fn open(&self, cli: &str, ctx: ToolContext, interactive: bool) -> Lease {
        let token = kernel_common::agentd_token::generate()
            .map(|t| t.expose().to_owned())
            .unwrap_or_else(|e| {
                // Without OS randomness no token can be trusted: this one matches nothing.
                tracing::warn!(error = %e, "no random token for the MCP bridge");
                String::new()
            });
        let n = self.inner.next.fetch_add(1, Ordering::Relaxed) + 1;
        let label = format!("{cli}#{n}");
        if !token.is_empty() {
            self.sessions().insert(
                token.clone(),
                Arc::new(Session {
                    label: label.clone(),
                    cli: cli.to_owned(),
                    ctx,
                    interactive,
                    last_note: Mutex::new(None),
                }),
            );
        }
        tracing::debug!(delegation = %label, "bridge token issued");
        Lease {
            bridge: self.clone(),
            token,
            url: format!("http://{}/mcp", self.inner.addr),
        }
    }

    /// The endpoint's address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn session(&self, token: &str) -> Option<Arc<Session>> {
        if token.is_empty() {
            return None;
        }
        self.sessions().get(token).cloned()
    }
}

async fn not_allowed() -> Response {
    (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response()
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body =
        json!({"jsonrpc": "2.0", "id": Value::Null, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

async fn handle(State(bridge): State<Bridge>, headers: HeaderMap, body: Bytes) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let Some(session) = bridge.session(token.trim()) else {
        tracing::warn!("MCP bridge: refused a request without a running delegation's token");
        return rpc_error(
            StatusCode::UNAUTHORIZED,
            -32001,
            "unauthorized: this token belongs to no running delegation",
        );
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(StatusCode::BAD_REQUEST, -32700, "parse error: not JSON");
    };
    match mcp::respond(&bridge, &session, message).await {
        Some(reply) => axum::Json(reply).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

#[cfg(test)]
mod tests;
