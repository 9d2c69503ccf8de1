//! Support for the fault suite (`tests/tests/it/faults/*.rs`): the real kernel-agentd started and
//! connected to, killed with SIGKILL, sessions resumed by id, and the final scan of every log file
//! and every reply for the test secrets.

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tonic::transport::Channel;

use crate::config::{AGENTD_TOKEN, PROVIDER_KEY, TELEGRAM_TOKEN, TestConfig};
use crate::process::AgentdProcess;

/// The real binary and a client on its Unix socket.
pub struct Agentd {
    pub client: AgentClient<Channel>,
    process: AgentdProcess,
}

impl Agentd {
    /// Starts `kernel-agentd` on `cfg` (ready once it says so) and connects to it.
    pub async fn start(cfg: &TestConfig) -> Agentd {
        let path = cfg.path.clone();
        let process = tokio::task::spawn_blocking(move || AgentdProcess::start(&path, &[]))
            .await
            .expect("start kernel-agentd");
        let client = connect(cfg.socket()).await;
        Agentd { client, process }
    }

    /// Kills it with SIGKILL (no shutdown of any kind) and returns everything it printed.
    pub fn kill9(self) -> String {
        let output = self.process.output();
        drop(self.process); // AgentdProcess ends its child with SIGKILL and reaps it.
        output
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.process.output()
    }
}

/// A client on the Unix socket at `path`.
pub async fn connect(path: PathBuf) -> AgentClient<Channel> {
    AgentClient::new(crate::harness::unix_channel(path).await)
}

/// Makes session `id` current again (by its number in a fresh listing); panics if it is not
/// listed.
pub async fn resume(client: &mut AgentClient<Channel>, id: i64) -> pb::ResumeSessionResponse {
    let number = session_number(client, id).await;
    client
        .resume_session(pb::ResumeSessionRequest {
            number,
            thread_id: None,
        })
        .await
        .expect("ResumeSession")
        .into_inner()
}

/// Session `id`'s number in a fresh `ListSessions`.
pub async fn session_number(client: &mut AgentClient<Channel>, id: i64) -> u32 {
    let listing = list(client).await;
    listing
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("session {id} is not listed: {listing:?}"))
        .number
}

/// Every session a listing shows.
pub async fn list(client: &mut AgentClient<Channel>) -> Vec<pb::SessionInfo> {
    client
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .expect("ListSessions")
        .into_inner()
        .sessions
}

/// The test secrets: none may appear in a log or a reply. The bot token's secret half counts on
/// its own (it could leak through a logged URL).
pub fn secrets() -> [&'static str; 4] {
    let tail = TELEGRAM_TOKEN
        .split_once(':')
        .map_or(TELEGRAM_TOKEN, |(_, t)| t);
    [TELEGRAM_TOKEN, tail, PROVIDER_KEY, AGENTD_TOKEN]
}

/// Everything a test saw come back (gRPC replies, process output), for the final secret scan.
#[derive(Debug, Default)]
pub struct Seen {
    texts: Vec<String>,
}

impl Seen {
    /// Keeps `reply` (its `Debug` form holds every field).
    pub fn reply(&mut self, reply: &impl Debug) {
        self.texts.push(format!("{reply:?}"));
    }

    /// Keeps `text` (e.g. a process's output).
    pub fn text(&mut self, text: String) {
        self.texts.push(text);
    }

    /// Asserts that no secret appears in anything seen nor in any file under `data_dir/logs`
    /// (rotated files included), and that the logs are there at all.
    pub fn assert_no_secrets(&self, data_dir: &Path) {
        let logs = log_files(&data_dir.join("logs"));
        assert!(!logs.is_empty(), "no log file under {}", data_dir.display());
        for (path, text) in &logs {
            for secret in secrets() {
                assert!(
                    !text.contains(secret),
                    "a secret in {}:\n{text}",
                    path.display()
                );
            }
        }
        for text in &self.texts {
            for secret in secrets() {
                assert!(!text.contains(secret), "a secret in a reply:\n{text}");
            }
        }
    }
}

/// Every file below `dir` with its text (lossy).
fn log_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(log_files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    out
}
