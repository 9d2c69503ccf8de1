//! Reaching kernel-agentd: a gRPC client over the Unix socket or TCP, with the bearer token, and
//! [`Agentd`], the shared handle that reconnects in the background after agentd went away (a
//! tracked task that [`Agentd::shutdown`] stops).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use kernel_common::Secret;
use kernel_proto::v1::agent_client::AgentClient;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::texts::Texts;

/// A connected client.
pub type Client = AgentClient<InterceptedService<Channel, TokenInterceptor>>;

/// Why agentd could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "invalid agentd endpoint {0:?}: use unix:/path/to/agentd.sock (Windows: pipe:\\\\.\\pipe\\name) or http(s)://host:port"
    )]
    BadEndpoint(String),
    #[error("cannot reach kernel-agentd at {endpoint}: {message} (is kernel-agentd running?)")]
    Unreachable { endpoint: String, message: String },
}

/// Adds `authorization: Bearer <token>` when a token is configured.
#[derive(Clone, Debug)]
pub struct TokenInterceptor {
    header: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Interceptor for TokenInterceptor {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// Connects to `endpoint` (`unix:<path>`, on Windows `pipe:<name>`, or `http(s)://host:port`).
pub async fn connect(endpoint: &str, token: Option<&Secret>) -> Result<Client, ConnectError> {
    let unreachable = |e: tonic::transport::Error| ConnectError::Unreachable {
        endpoint: endpoint.to_string(),
        message: source_chain(&e),
    };
    #[cfg(windows)]
    let local = endpoint.strip_prefix("pipe:");
    #[cfg(unix)]
    let local = endpoint.strip_prefix("unix:");
    let channel = if let Some(path) = local {
        let path = path.to_string();
        Endpoint::from_static("http://localhost")
            .connect_timeout(Duration::from_secs(5))
            .connect_with_connector(tower::service_fn(move |_| {
                let path = path.clone();
                async move { dial_local(&path).await.map(TokioIo::new) }
            }))
            .await
            .map_err(unreachable)?
    } else if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        Endpoint::from_shared(endpoint.to_string())
            .map_err(|_| ConnectError::BadEndpoint(endpoint.to_string()))?
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(unreachable)?
    } else {
        return Err(ConnectError::BadEndpoint(endpoint.to_string()));
    };
    let header = token.and_then(|t| format!("Bearer {}", t.expose()).parse().ok());
    // A voice reply may be up to 20 MB: over tonic's default 4 MiB decoding limit.
    Ok(
        AgentClient::with_interceptor(channel, TokenInterceptor { header })
            .max_decoding_message_size(kernel_proto::MAX_RESPONSE_BYTES),
    )
}

/// Opens the Unix socket at `path`.
#[cfg(unix)]
async fn dial_local(path: &str) -> std::io::Result<tokio::net::UnixStream> {
    tokio::net::UnixStream::connect(path).await
}

/// Opens the named pipe `name`, waiting while every instance is busy (agentd makes a new one
/// as soon as a client connected).
#[cfg(windows)]
async fn dial_local(
    name: &str,
) -> std::io::Result<tokio::net::windows::named_pipe::NamedPipeClient> {
    /// `ERROR_PIPE_BUSY`.
    const PIPE_BUSY: i32 = 231;
    let mut tries = 0;
    loop {
        match tokio::net::windows::named_pipe::ClientOptions::new().open(name) {
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) && tries < 100 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

/// Like [`connect`], retrying every 500 ms up to `attempts` times while agentd is unreachable.
pub async fn connect_with_retry(
    endpoint: &str,
    token: Option<&Secret>,
    attempts: u32,
) -> Result<Client, ConnectError> {
    let mut tries = 0;
    loop {
        match connect(endpoint, token).await {
            Err(ConnectError::Unreachable { .. }) if tries + 1 < attempts => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            other => return other,
        }
    }
}

/// Longest pause between two reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// First pause between two reconnection attempts.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// A cheap `Clone` handle to kernel-agentd: a cached client, replaced after a transport failure
/// by a background reconnection loop with backoff. The loop is tracked: [`Agentd::shutdown`]
/// stops it and waits for it, and no new one starts after that.
#[derive(Clone)]
pub struct Agentd {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    token: Option<Secret>,
    client: Mutex<Option<Client>>,
    reconnecting: Mutex<bool>,
    /// The reconnection loop, when one runs.
    tasks: TaskTracker,
    /// Cancelled by [`Agentd::shutdown`].
    stop: CancellationToken,
}

impl std::fmt::Debug for Agentd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agentd")
            .field("endpoint", &self.inner.endpoint)
            .finish_non_exhaustive()
    }
}

impl Agentd {
    /// A handle that connects on first use.
    pub fn new(endpoint: impl Into<String>, token: Option<Secret>) -> Self {
        Self {
            inner: Arc::new(Inner {
                endpoint: endpoint.into(),
                token,
                client: Mutex::new(None),
                reconnecting: Mutex::new(false),
                tasks: TaskTracker::new(),
                stop: CancellationToken::new(),
            }),
        }
    }

    /// The configured endpoint.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// The connected client, connecting now when there is none.
    pub async fn client(&self) -> Result<Client, ConnectError> {
        if let Some(client) = self.cached() {
            return Ok(client);
        }
        let client = connect(&self.inner.endpoint, self.inner.token.as_ref()).await?;
        self.store(Some(client.clone()));
        Ok(client)
    }

    /// Reports that agentd went away: drops the cached client and reconnects in the background,
    /// with backoff, until agentd answers again (one loop at a time; none after shutdown).
    pub fn lost(&self) {
        self.store(None);
        {
            let mut reconnecting = lock(&self.inner.reconnecting);
            if *reconnecting || self.inner.stop.is_cancelled() {
                return;
            }
            *reconnecting = true;
        }
        let this = self.clone();
        self.inner.tasks.spawn(async move {
            let stop = this.inner.stop.clone();
            tokio::select! {
                () = this.reconnect() => {}
                () = stop.cancelled() => {}
            }
            *lock(&this.inner.reconnecting) = false;
        });
    }

    /// Stops the reconnection loop (if one runs) and waits for it to end.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
    }

    async fn reconnect(&self) {
        let mut pause = FIRST_BACKOFF;
        loop {
            tokio::time::sleep(pause).await;
            match connect(&self.inner.endpoint, self.inner.token.as_ref()).await {
                Ok(client) => {
                    self.store(Some(client));
                    tracing::info!(endpoint = %self.inner.endpoint, "reconnected to kernel-agentd");
                    return;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "kernel-agentd still unreachable");
                    pause = (pause * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    fn cached(&self) -> Option<Client> {
        lock(&self.inner.client).clone()
    }

    fn store(&self, client: Option<Client>) {
        *lock(&self.inner.client) = client;
    }
}

/// Whether `status` says agentd itself could not be reached or went away mid-call (as opposed
/// to agentd refusing the request: agentd never answers UNAVAILABLE itself).
pub fn is_transport_failure(status: &tonic::Status) -> bool {
    matches!(status.code(), tonic::Code::Unavailable)
        || (matches!(status.code(), tonic::Code::Unknown | tonic::Code::Cancelled)
            && std::error::Error::source(status).is_some())
}

/// What to tell the owner when agentd refused a request: its refusal said in the owner's
/// language, or (a reason this build does not know, or a refusal agentd already put in the
/// owner's language, e.g. a media refusal) its message.
pub fn refused(status: &tonic::Status, texts: Texts) -> String {
    kernel_proto::refusal::of(status)
        .and_then(|r| texts.refusal(&r.reason, &r.args))
        .unwrap_or_else(|| texts.rejected(status.message()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket path that does not exist: every connection attempt fails at once.
    const NOWHERE: &str = "unix:/nonexistent/kernel-tg-test/agentd.sock";

    #[tokio::test(start_paused = true)]
    async fn shutdown_stops_the_reconnect_loop_at_once_and_no_new_one_starts() {
        let agentd = Agentd::new(NOWHERE, None);
        agentd.lost();
        agentd.lost();
        assert_eq!(agentd.inner.tasks.len(), 1, "one loop at a time");
        // Let it fail a few attempts (paused time runs the backoff at once).
        tokio::time::sleep(FIRST_BACKOFF * 4).await;
        assert_eq!(agentd.inner.tasks.len(), 1, "still trying");

        let asked = tokio::time::Instant::now();
        agentd.shutdown().await;
        assert!(
            asked.elapsed() < FIRST_BACKOFF,
            "waited {:?}",
            asked.elapsed()
        );
        assert!(agentd.inner.tasks.is_empty(), "a reconnect task remains");

        agentd.lost();
        assert!(
            agentd.inner.tasks.is_empty(),
            "a loop started after shutdown"
        );
        assert!(agentd.cached().is_none());
    }
}
