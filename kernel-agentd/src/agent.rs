//! `Agent`: the daemon's shared state behind a cheap `Clone` handle; every RPC calls into it.
//!
//! Features add their methods in their own modules (`impl Agent` in `sessions.rs`,
//! `selection.rs`, `titling.rs`, `turn.rs`); this file only owns the state and its start-up.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kernel_common::Config;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::llm::titles::TitlesClient;
use crate::llm::{self, Provider};
use crate::selection::Selection;
use crate::sessions::SessionState;
use crate::store::Store;

/// The daemon's state. Cloning is cheap (an `Arc`).
#[derive(Clone, Debug)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(crate) store: Store,
    pub(crate) started: Instant,
    /// Cancelled at shutdown; every turn's token is a child of it.
    pub(crate) root: CancellationToken,
    /// Background work (titles) that shutdown waits for.
    pub(crate) tasks: TaskTracker,
    /// Usable providers (those with a key), by name.
    pub(crate) providers: BTreeMap<String, Arc<dyn Provider>>,
    pub(crate) titles: Option<Arc<TitlesClient>>,
    pub(crate) selection: Mutex<Selection>,
    pub(crate) sessions: Mutex<SessionState>,
    /// The turn loop's state: gate, tools, persona, memory recall (see `turn.rs`).
    pub(crate) turns: crate::turn::Turns,
    /// The MCP servers and their tools (see `mcp.rs`).
    pub(crate) mcp: crate::mcp::Mcp,
    /// Long-term memory: store, search, `#n` listing, recall (see `memory.rs`).
    pub(crate) memory: Arc<crate::memory::Memories>,
    /// CLI delegation: one at a time, the running one (see `delegate.rs`).
    pub(crate) cli: Arc<crate::delegate::Delegator>,
    /// Everything for the owner until delivered, and the live owner turn (see `outbox.rs`).
    pub(crate) outbox: crate::outbox::Outbox<crate::turn::TurnEvent>,
}

/// What `GetStatus` reports (domain form; `rpc` converts it).
#[derive(Debug, Clone)]
pub struct Status {
    pub version: &'static str,
    pub uptime: std::time::Duration,
    pub database_path: String,
    pub fts5_available: bool,
    pub current_session: Option<crate::sessions::SessionInfo>,
    pub provider: String,
    pub model: String,
    /// The running turn, running CLI and last error.
    pub turn: crate::turn::TurnStatus,
    /// Configured MCP servers and their state.
    pub mcp_servers: Vec<crate::mcp::McpServerStatus>,
    /// Outbox items not yet delivered.
    pub outbox: crate::outbox::Backlog,
}

impl Agent {
    /// Opens the database under `data_dir`, builds the providers and restores the saved
    /// provider/model choice. `root` is the server's root cancellation token; `ext` carries the
    /// tool registry and an optional memory recall (defaults for the daemon, test doubles in tests).
    pub async fn start(
        config: Config,
        root: CancellationToken,
        ext: crate::turn::Extensions,
    ) -> Result<Agent, ApiError> {
        let db = config.general.data_dir.join("kernel.db");
        let store = Store::open(&db).await.map_err(ApiError::internal)?;
        let mut providers = BTreeMap::new();
        for (name, cfg) in config.providers.iter().filter(|(_, c)| c.available()) {
            let provider = llm::build(cfg).map_err(ApiError::internal)?;
            providers.insert(name.clone(), provider);
        }
        let titles = match &config.titles {
            Some(t) if t.api_key.is_some() => {
                Some(Arc::new(TitlesClient::new(t).map_err(ApiError::internal)?))
            }
            _ => None,
        };
        let selection = Selection::restore(&config, &store).await?;
        tracing::info!(provider = %selection.provider, model = %selection.model, "provider selected");
        let tz = config.general.timezone;
        let memory = Arc::new(crate::memory::Memories::open(store.clone(), tz).await);
        let turns = crate::turn::Turns::new(&config, memory.clone(), ext);
        let mcp = crate::mcp::Mcp::start(
            &config,
            turns.tools.clone(),
            crate::mcp::McpSettings::default(),
            root.child_token(),
        );
        crate::memory::register_tools(&turns.tools, &memory).map_err(ApiError::internal)?;
        let tasks = TaskTracker::new();
        let cli = Arc::new(crate::delegate::Delegator::new(&config, tasks.clone()));
        crate::delegate::register_tool(&turns.tools, &cli).map_err(ApiError::internal)?;
        crate::retention::spawn(&tasks, config.general.data_dir.clone(), root.child_token());
        let outbox = crate::outbox::Outbox::new(store.clone(), root.child_token());
        Ok(Agent {
            inner: Arc::new(Inner {
                config,
                store,
                started: Instant::now(),
                root,
                tasks,
                providers,
                titles,
                selection: Mutex::new(selection),
                sessions: Mutex::new(SessionState::default()),
                turns,
                mcp,
                memory,
                cli,
                outbox,
            }),
        })
    }

    /// The validated config.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The database handle.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The owner's delivery queue.
    pub fn outbox(&self) -> &crate::outbox::Outbox<crate::turn::TurnEvent> {
        &self.inner.outbox
    }

    /// Stops background work and closes the database.
    pub async fn shutdown(&self) {
        self.inner.root.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        self.inner.mcp.shutdown().await;
        self.inner.store.close().await;
    }

    /// A snapshot of the daemon's state.
    pub async fn status(&self) -> Result<Status, ApiError> {
        let selection = self.selection();
        Ok(Status {
            version: env!("CARGO_PKG_VERSION"),
            uptime: self.inner.started.elapsed(),
            database_path: self.inner.store.path().display().to_string(),
            // Whether memory search really uses the FTS5 index (not just whether SQLite has it).
            fts5_available: self.inner.memory.mode() == crate::memory::SearchMode::Fts5,
            current_session: self.current_session_info().await?,
            provider: selection.provider,
            model: selection.model,
            turn: self.turn_status(),
            mcp_servers: self.inner.mcp.status(),
            outbox: self
                .inner
                .outbox
                .backlog()
                .await
                .map_err(ApiError::internal)?,
        })
    }
}
