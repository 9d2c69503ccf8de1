//! An in-process kernel-agentd: `kernel_agentd::run` on a temp Unix socket with a connected
//! tonic client, for tests that drive the real gRPC service.

use std::sync::Arc;

use hyper_util::rt::TokioIo;
use kernel_agentd::tools::{Tool, ToolRegistry};
use kernel_agentd::turn::Extensions;
use kernel_proto::v1::agent_client::AgentClient;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tonic::transport::{Channel, Endpoint};

use crate::config::TestConfig;

/// A running in-process server and a client connected to it.
pub struct Harness {
    pub cfg: TestConfig,
    pub client: AgentClient<Channel>,
    /// The agent's tools and memory recall (the registry is shared: tests may register more).
    pub ext: Extensions,
    /// The tools the test registered before start (kept for a restart).
    own_tools: Vec<Arc<dyn Tool>>,
    stop: CancellationToken,
    server: JoinHandle<anyhow::Result<()>>,
}

impl Harness {
    /// Starts the service from `cfg` (its socket is bound before the server task is spawned, so the
    /// client can connect at once).
    pub async fn start(cfg: TestConfig) -> Harness {
        Harness::start_with(cfg, Extensions::default()).await
    }

    /// Like [`Harness::start`], with the agent's tools and memory recall from `ext`.
    pub async fn start_with(cfg: TestConfig, ext: Extensions) -> Harness {
        let own_tools = ext
            .tools
            .names()
            .iter()
            .filter_map(|name| ext.tools.get(name))
            .collect();
        let config = cfg.load();
        let unix_path = config.agentd.socket.clone();
        std::fs::create_dir_all(unix_path.parent().expect("socket dir")).expect("create data dir");
        let unix = kernel_agentd::listen::bind_unix(&unix_path)
            .await
            .expect("bind socket");
        let listeners = kernel_agentd::Listeners {
            unix,
            unix_path: unix_path.clone(),
            tcp: None,
        };
        let stop = CancellationToken::new();
        let server = tokio::spawn(kernel_agentd::server::run_with(
            config,
            listeners,
            stop.clone().cancelled_owned(),
            ext.clone(),
        ));
        let client = AgentClient::new(unix_channel(unix_path).await);
        Harness {
            cfg,
            client,
            ext,
            own_tools,
            stop,
            server,
        }
    }

    /// Another client on the same socket.
    pub async fn client(&self) -> AgentClient<Channel> {
        AgentClient::new(unix_channel(self.cfg.socket()).await)
    }

    /// Stops the server (graceful) and returns the config dir for a restart.
    pub async fn stop(self) -> TestConfig {
        self.stop.cancel();
        self.server
            .await
            .expect("server task")
            .expect("server stopped cleanly");
        self.cfg
    }

    /// Stops and starts again on the same config and database, with the tools the test gave
    /// (the agent registers its built-in tools again).
    pub async fn restart(self) -> Harness {
        let ext = Extensions {
            tools: ToolRegistry::new(),
            recall: self.ext.recall.clone(),
        };
        for tool in &self.own_tools {
            ext.tools
                .register(tool.clone())
                .expect("re-register a test tool");
        }
        let cfg = self.stop().await;
        Harness::start_with(cfg, ext).await
    }
}

/// A channel to an agentd on the Unix socket at `path`.
pub async fn unix_channel(path: std::path::PathBuf) -> Channel {
    Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move {
                tokio::net::UnixStream::connect(path)
                    .await
                    .map(TokioIo::new)
            }
        }))
        .await
        .expect("connect to kernel-agentd")
}
