//! `Rig`: the fake LLM, the fake Bot API and a fresh config + data dir, with helpers to start
//! the real release binaries on them and to connect a gRPC client to kernel-agentd.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kernel_proto::v1::agent_client::AgentClient;
use tests::config::{TELEGRAM_TOKEN, TestConfig};
use tests::fake_llm::FakeLlm;
use tests::fake_telegram::{FakeTelegram, OWNER_ID};
use tonic::transport::{Channel, Endpoint};

use crate::procs::Proc;

/// Fakes and a config; see the module docs.
pub(crate) struct Rig {
    pub llm: FakeLlm,
    pub telegram: FakeTelegram,
    pub cfg: TestConfig,
    pub bins: PathBuf,
}

impl Rig {
    /// Starts both fakes and writes a config (claude provider, owner [`OWNER_ID`]).
    pub(crate) async fn new(bins: PathBuf) -> Rig {
        Rig::with_extra(bins, "").await
    }

    /// Like [`Rig::new`], with `extra` TOML appended to the config.
    pub(crate) async fn with_extra(bins: PathBuf, extra: &str) -> Rig {
        let llm = FakeLlm::start().await;
        let telegram = FakeTelegram::start(TELEGRAM_TOKEN).await;
        let cfg = TestConfig::with_kind("claude", &llm.url(), extra);
        let api_url = telegram.api_url();
        cfg.rewrite(|toml| {
            toml.replace(
                "allowed_user = 42",
                // The placeholder path: a turn ends when its placeholder is deleted.
                &format!(
                    "allowed_user = {OWNER_ID}\napi_url = \"{api_url}\"\nlive_preview = false"
                ),
            )
        });
        Rig {
            llm,
            telegram,
            cfg,
            bins,
        }
    }

    /// Starts kernel-agentd and waits for "kernel-agentd ready".
    pub(crate) async fn agentd(&self) -> anyhow::Result<Proc> {
        Proc::start(
            &self.bins,
            "kernel-agentd",
            &self.cfg.path,
            "kernel-agentd ready",
        )
        .await
    }

    /// Starts kernel-tg; returns it and the time from spawn to its first regular getUpdates
    /// at the fake Bot API.
    pub(crate) async fn bot(&self) -> anyhow::Result<(Proc, Duration)> {
        self.telegram.reset_polling();
        let start = Instant::now();
        let bot = Proc::start(&self.bins, "kernel-tg", &self.cfg.path, "kernel-tg ready").await?;
        self.telegram.wait_polling(Duration::from_secs(60)).await;
        Ok((bot, start.elapsed()))
    }

    /// A gRPC client on kernel-agentd's Unix socket.
    pub(crate) async fn client(&self) -> anyhow::Result<AgentClient<Channel>> {
        let path = self.cfg.socket();
        let channel = Endpoint::from_static("http://localhost")
            .connect_with_connector(tower::service_fn(move |_| {
                let path = path.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(path).await?;
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                }
            }))
            .await
            .context("connect to kernel-agentd")?;
        Ok(AgentClient::new(channel))
    }

    /// `<data>/kernel.db`.
    pub(crate) fn db_path(&self) -> PathBuf {
        self.cfg.data_dir().join("kernel.db")
    }

    /// Bytes of the database files (`kernel.db` and its `-wal`, `-shm`).
    pub(crate) fn db_bytes(&self) -> u64 {
        ["kernel.db", "kernel.db-wal", "kernel.db-shm"]
            .iter()
            .filter_map(|f| std::fs::metadata(self.cfg.data_dir().join(f)).ok())
            .map(|m| m.len())
            .sum()
    }
}
