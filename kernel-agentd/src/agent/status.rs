//! What `GetStatus` reports, gathered from the services: [`Status`] and `Agent::status`.

use super::Agent;
use crate::consolidation::ConsolidationStatus;
use crate::error::ApiError;
use crate::mcp::McpServerStatus;
use crate::memory::SearchMode;
use crate::memory::semantic::EmbeddingsStatus;
use crate::memory_auto::AutoStatus;
use crate::models::cooldown::Cooldown;
use crate::outbox::Backlog;
use crate::sessions::SessionInfo;
use crate::turn::{ContextFill, TurnStatus};

/// What `GetStatus` reports (domain form; `rpc` converts it).
#[derive(Debug, Clone)]
pub(crate) struct Status {
    pub version: &'static str,
    pub uptime: std::time::Duration,
    pub database_path: String,
    pub fts5_available: bool,
    pub current_session: Option<SessionInfo>,
    pub provider: String,
    pub model: String,
    /// The running turn, running CLI and last error.
    pub turn: TurnStatus,
    /// Configured MCP servers and their state.
    pub mcp_servers: Vec<McpServerStatus>,
    /// Outbox items not yet delivered.
    pub outbox: Backlog,
    /// Providers (and `[titles]`) cooling down after failed calls.
    pub cooldowns: Vec<(String, Cooldown)>,
    /// Whether auto memory runs, and its last run.
    pub memory_auto: AutoStatus,
    /// Whether memory consolidation runs, and its last run.
    pub consolidation: ConsolidationStatus,
    /// Embeddings (model, memories with vectors / all, last error), when configured.
    pub embeddings: Option<(EmbeddingsStatus, u64)>,
    /// The current session's context fill.
    pub context: ContextFill,
    /// The conversation index: messages looked at, and all messages.
    pub history_index: crate::store::history_index::HistoryProgress,
    /// Model calls retried on the same provider since the start, and the last retry.
    pub retries: (u64, Option<crate::llm::retry::LastRetry>),
    /// Whether each configured CLI runs sandboxed.
    pub cli_sandboxes: Vec<kernel_common::config::sandbox::CliSandbox>,
}

impl Agent {
    /// A snapshot of the daemon's state.
    pub(crate) async fn status(&self) -> Result<Status, ApiError> {
        let selection = self.inner.models.selection();
        let current_session = self.inner.sessions.current_info().await?;
        let context = self
            .inner
            .turns
            .context_fill(current_session.as_ref().map(|s| s.id))
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot estimate the context fill");
                ContextFill::default()
            });
        Ok(Status {
            version: env!("CARGO_PKG_VERSION"),
            uptime: self.inner.started.elapsed(),
            database_path: self.inner.store.path().display().to_string(),
            // Whether memory search really uses the FTS5 index (not just whether SQLite has it).
            fts5_available: self.inner.memories.mode() == SearchMode::Fts5,
            current_session,
            provider: selection.provider,
            model: selection.model,
            turn: TurnStatus {
                running_cli: self.inner.delegator.running(),
                ..self.inner.turns.status()
            },
            mcp_servers: self.inner.mcp.status(),
            outbox: self
                .inner
                .outbox
                .backlog()
                .await
                .map_err(ApiError::internal)?,
            cooldowns: self.inner.models.cooldowns().all_active(),
            retries: self.inner.models.retries().snapshot(),
            memory_auto: self.inner.memory_auto.status(),
            consolidation: self.inner.consolidation.status(),
            embeddings: match self.inner.memories.semantic() {
                Some(s) => Some((
                    s.status().await,
                    self.inner.memories.count().await.unwrap_or(0),
                )),
                None => None,
            },
            context,
            history_index: self.inner.history.progress().await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read the conversation index's progress");
                Default::default()
            }),
            cli_sandboxes: self.inner.delegator.sandboxes().to_vec(),
        })
    }
}
