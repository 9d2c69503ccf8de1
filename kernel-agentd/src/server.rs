//! Serving the API: the `kernel.v1.Agent` service plus `grpc.health.v1` and server reflection
//! (v1 and v1alpha) on the Unix socket (Windows: the named pipe), and on TCP behind a bearer
//! token (and TLS if configured).

mod auth;
mod on_first_call;

use std::future::Future;

use kernel_common::Config;
use kernel_proto::v1::agent_server::AgentServer;
use tokio::task::JoinSet;
use tokio_stream::wrappers::TcpListenerStream;
#[cfg(unix)]
use tokio_stream::wrappers::UnixListenerStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::agent::Agent;
use crate::listen::Listeners;
use crate::rpc::AgentService;
use crate::turn::Extensions;
use on_first_call::OnFirstCall;

pub use auth::BearerAuth;

/// Largest request accepted: a turn's attachments (up to ten of 20 MB each, an album) plus text.
pub const MAX_REQUEST_BYTES: usize = kernel_common::limits::MAX_ATTACHMENTS
    * kernel_common::limits::MAX_ATTACHMENT_BYTES
    + 8 * 1024 * 1024;

/// Serves until `shutdown` resolves, then stops accepting, cancels running work and drains.
pub async fn run(
    config: Config,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run_with(config, listeners, shutdown, Extensions::default()).await
}

/// [`run`] with explicit [`Extensions`]: the tool registry the agent fills and offers (shared with
/// the caller) and an optional memory recall. Tests use it to add their own tools.
///
/// Once the agent has started it is always shut down (running work cancelled and drained, MCP
/// children closed, SQLite closed) before this returns, also when a listener fails to start or a
/// serve task fails; the first such error is returned then.
pub async fn run_with(
    config: Config,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ext: Extensions,
) -> anyhow::Result<()> {
    let mut config = config;
    // `main` has done it already; a caller that has not gets the same token file.
    if let Some(generated) = crate::listen::token::ensure(&mut config, listeners.tcp.is_some())? {
        generated.log();
    }
    let root = CancellationToken::new();
    let agent = Agent::start(config.clone(), root.child_token(), ext).await?;
    let daily_backups = crate::backup::daily::spawn(config.clone(), root.child_token());
    let mut tasks = JoinSet::new();
    let mut result = serve(&config, listeners, shutdown, &agent, &root, &mut tasks).await;
    if let Err(e) = &result {
        tracing::error!(error = %format!("{e:#}"), "serving failed; shutting down");
    }
    root.cancel();
    agent.shutdown().await;
    daily_backups.await.ok();
    while let Some(res) = tasks.join_next().await {
        if let Err(e) = served(res)
            && result.is_ok()
        {
            result = Err(e);
        }
    }
    if result.is_ok() {
        tracing::info!("stopped");
    }
    result
}

/// Server reflection's builder over agentd's API and the health service.
fn reflection() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(kernel_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
}

/// What one serve task returns.
type ServeTask = Result<(), tonic::transport::Error>;

/// Starts the serve tasks on `tasks` and waits for `shutdown`, or for a serve task to end (which
/// only happens when it fails: they stop on `root`).
async fn serve(
    config: &Config,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
    agent: &Agent,
    root: &CancellationToken,
    tasks: &mut JoinSet<ServeTask>,
) -> anyhow::Result<()> {
    let web = crate::web_auth::WebAuth::open(&config.general.data_dir)
        .map_err(|e| anyhow::anyhow!("cannot load or create the web console key: {e}"))?;
    let service = AgentServer::new(AgentService::new(agent.clone(), web, config.clone()))
        .max_decoding_message_size(MAX_REQUEST_BYTES);

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<AgentServer<AgentService>>().await;
    // Built on the first reflection request (grpcurl), not here: see `on_first_call`.
    let reflection_v1 = OnFirstCall::new(|| reflection().build_v1());
    let reflection_v1alpha = OnFirstCall::new(|| reflection().build_v1alpha());

    {
        let router = Server::builder()
            .add_service(health_service.clone())
            .add_service(reflection_v1.clone())
            .add_service(reflection_v1alpha.clone())
            .add_service(service.clone());
        let token = root.clone();
        #[cfg(unix)]
        let incoming = UnixListenerStream::new(listeners.unix);
        #[cfg(unix)]
        tracing::info!(socket = %listeners.unix_path.display(), "serving gRPC on the Unix socket");
        #[cfg(windows)]
        let incoming = listeners.unix.incoming();
        #[cfg(windows)]
        tracing::info!(pipe = %listeners.unix_path.display(), "serving gRPC on the named pipe");
        tasks.spawn(async move {
            router
                .serve_with_incoming_shutdown(incoming, token.cancelled_owned())
                .await
        });
    }
    if let Some(tcp) = listeners.tcp {
        let addr = tcp.local_addr()?;
        let token = config.agentd.token.clone().ok_or_else(|| {
            anyhow::anyhow!("agentd.token is required for TCP (or a loopback listen address)")
        })?;
        let mut builder = Server::builder();
        if let Some(tls) = &config.agentd.tls {
            let cert = tokio::fs::read(&tls.cert).await?;
            let key = tokio::fs::read(&tls.key).await?;
            builder = builder
                .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))?;
        }
        let router = builder
            .layer(tonic::service::InterceptorLayer::new(BearerAuth::new(
                token,
            )))
            .add_service(health_service)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .add_service(service);
        let cancel = root.clone();
        tracing::info!(%addr, tls = config.agentd.tls.is_some(), "serving gRPC on TCP (bearer token required)");
        tasks.spawn(async move {
            router
                .serve_with_incoming_shutdown(TcpListenerStream::new(tcp), cancel.cancelled_owned())
                .await
        });
    }
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "kernel-agentd ready");
    kernel_common::notify::ready();

    tokio::select! {
        () = shutdown => {
            tracing::info!("shutting down");
            Ok(())
        }
        Some(res) = tasks.join_next() => served(res),
    }
}

/// A finished serve task's outcome (a panic is an error too).
fn served(res: Result<ServeTask, tokio::task::JoinError>) -> anyhow::Result<()> {
    Ok(res??)
}
