//! Opening one MCP connection: a child process on stdio (stderr to the log, killed on drop) or
//! streamable HTTP (configured headers, values never logged), initialised with a client handler
//! that reports `tools/list_changed`.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use kernel_common::config::{McpServerConfig, McpTransport, is_secret_env};
use kernel_common::{Redactor, Secret};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService, RunningServiceCancellationToken};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt as _};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::reason;

/// Longest a closing connection may take (the stdio transport waits, TERMs, then kills).
const CLOSE_GRACE: Duration = Duration::from_secs(10);
/// Longest stderr line logged.
const MAX_STDERR_LINE: usize = 500;

/// Why a connection could not be opened (messages are redacted by the caller).
#[derive(Debug, thiserror::Error)]
pub(super) enum ConnectError {
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("header {0:?} has an invalid name or value")]
    Header(String),
    /// rmcp's error said in words ([`reason::initialize`]).
    #[error("{0}")]
    Initialize(String),
}

/// Our side of the protocol: no sampling, roots or elicitation; reports tool-list changes.
#[derive(Debug, Clone)]
struct Handler {
    list_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("kernel-agentd", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live, initialised connection.
pub(super) struct Connection {
    pub peer: Peer<RoleClient>,
    cancel: Option<RunningServiceCancellationToken>,
    /// Ends when the service loop ends (transport closed, or after `close`).
    done: JoinHandle<()>,
    finished: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Resolves once the connection has ended by itself (server exited, stream closed).
    pub(super) async fn closed(&mut self) {
        if !self.finished {
            let _ = (&mut self.done).await;
            self.finished = true;
        }
    }

    /// Closes it: the stdio child gets end-of-input, then TERM, then KILL, and is reaped.
    pub(super) async fn close(mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if !self.finished
            && tokio::time::timeout(CLOSE_GRACE, &mut self.done)
                .await
                .is_err()
        {
            tracing::warn!("mcp connection did not close in time");
            self.done.abort();
        }
    }
}

/// Connects to `server`; `list_changed` is notified on `tools/list_changed`.
pub(super) async fn open(
    server: &McpServerConfig,
    list_changed: Arc<Notify>,
    redactor: &Redactor,
) -> Result<Connection, ConnectError> {
    let handler = Handler { list_changed };
    let running = match &server.transport {
        McpTransport::Stdio { command, args, env } => {
            let (transport, stderr) = spawn(command, args, env)?;
            if let Some(stderr) = stderr {
                tokio::spawn(log_stderr(server.name.clone(), stderr, redactor.clone()));
            }
            handler.serve(transport).await
        }
        McpTransport::Http { url, headers } => {
            // rmcp builds its own reqwest client, which needs the process's TLS provider.
            crate::http::install_crypto_provider();
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(header_map(headers)?);
            handler
                .serve(StreamableHttpClientTransport::from_config(config))
                .await
        }
    };
    let running = running.map_err(|e| {
        tracing::debug!(server = %server.name, error = %redactor.redact(&e.to_string()), "mcp initialisation failed");
        ConnectError::Initialize(reason::initialize(&e))
    })?;
    Ok(wrap(running))
}

fn wrap(running: RunningService<RoleClient, Handler>) -> Connection {
    let peer = running.peer().clone();
    let cancel = Some(running.cancellation_token());
    let done = tokio::spawn(async move {
        let _ = running.waiting().await;
    });
    Connection {
        peer,
        cancel,
        done,
        finished: false,
    }
}

/// The child: inherits agentd's environment less Kernel's own secrets, plus `env`.
fn spawn(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, Secret>,
) -> Result<(TokioChildProcess, Option<ChildStderr>), ConnectError> {
    // On Windows `npx` / `uvx` resolve like a CLI's command (an npm shim runs its script).
    let program = crate::program::resolve(command);
    let mut cmd = tokio::process::Command::new(&program.path);
    cmd.args(&program.leading).args(args).kill_on_drop(true);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_secret_env) {
            cmd.env_remove(&name);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v.expose())));
    TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ConnectError::Spawn {
            command: command.to_owned(),
            source,
        })
}

fn header_map(
    headers: &std::collections::BTreeMap<String, Secret>,
) -> Result<HashMap<HeaderName, HeaderValue>, ConnectError> {
    headers
        .iter()
        .map(|(name, value)| {
            let bad = || ConnectError::Header(name.clone());
            let n = HeaderName::try_from(name.as_str()).map_err(|_| bad())?;
            let mut v = HeaderValue::from_str(value.expose()).map_err(|_| bad())?;
            v.set_sensitive(true);
            Ok((n, v))
        })
        .collect()
}

/// Logs the server's stderr line by line (redacted, long lines cut) until it closes.
async fn log_stderr(server: String, stderr: ChildStderr, redactor: Redactor) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = kernel_common::text::head(&line, MAX_STDERR_LINE);
        tracing::info!(server = %server, line = %redactor.redact(line), "mcp server stderr");
    }
}
