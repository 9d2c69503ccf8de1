//! Reaching kernel-agentd: a gRPC client over the Unix socket or TCP, with the bearer token.

use std::time::Duration;

use hyper_util::rt::TokioIo;
use kernel_common::Secret;
use kernel_proto::v1::agent_client::AgentClient;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A connected client.
pub type Client = AgentClient<InterceptedService<Channel, TokenInterceptor>>;

/// Why agentd could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid agentd endpoint {0:?}: use unix:/path/to/agentd.sock or http(s)://host:port")]
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

/// Connects to `endpoint` (`unix:<path>` or `http(s)://host:port`).
pub async fn connect(endpoint: &str, token: Option<&Secret>) -> Result<Client, ConnectError> {
    let unreachable = |e: tonic::transport::Error| ConnectError::Unreachable {
        endpoint: endpoint.to_string(),
        message: source_chain(&e),
    };
    let channel = if let Some(path) = endpoint.strip_prefix("unix:") {
        let path = path.to_string();
        Endpoint::from_static("http://localhost")
            .connect_timeout(Duration::from_secs(5))
            .connect_with_connector(tower::service_fn(move |_| {
                let path = path.clone();
                async move {
                    tokio::net::UnixStream::connect(path)
                        .await
                        .map(TokioIo::new)
                }
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
    Ok(AgentClient::with_interceptor(
        channel,
        TokenInterceptor { header },
    ))
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
