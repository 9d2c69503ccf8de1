//! `Agent`: the composition root. It builds the services from the config, hands each the others
//! it uses, and starts and stops them; `rpc` calls the services through it
//! (`agent.sessions().list()`). No service imports this module.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use kernel_common::Config;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::approvals::Approvals;
use crate::consolidation::Consolidation;
use crate::delegate::Delegator;
use crate::error::ApiError;
use crate::jobs::Jobs;
use crate::llm::titles::TitlesClient;
use crate::mcp::{Mcp, McpSettings};
use crate::media::Media;
use crate::memory::Memories;
use crate::memory::embeddings::EmbeddingsClient;
use crate::memory::semantic::Semantic;
use crate::memory_auto::AutoMemory;
use crate::models::Models;
use crate::outbox::Outbox;
use crate::quiet::Quiet;
use crate::recall::History;
use crate::schedule::Schedules;
use crate::sessions::Sessions;
use crate::skills::Skills;
use crate::store::Store;
use crate::store::vectors::Corpus;
use crate::summary_rewrite::SummaryRewriter;
use crate::titling::Titler;
use crate::tools::ToolRegistry;
mod status;

pub(crate) use status::Status;

use crate::turn::{Extensions, MemoryRecall, RoundHook, TurnEvent, Turns, TurnsSetup};
use crate::usage::UsageLedger;

/// The daemon's services. Cloning is cheap (an `Arc`).
#[derive(Clone, Debug)]
pub(crate) struct Agent {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    started: Instant,
    /// Cancelled at shutdown; every turn's token is a child of it.
    root: CancellationToken,
    /// Background work (turns, titles, CLI supervision, retention) that shutdown waits for.
    tasks: TaskTracker,
    sessions: Sessions,
    models: Models,
    titler: Titler,
    memories: Arc<Memories>,
    /// The conversation index (`history_search`, `SearchHistory`).
    history: History,
    /// Background notes and automatic memories.
    memory_auto: AutoMemory,
    /// Tidying automatic memories after auto memory ran.
    consolidation: Consolidation,
    delegator: Arc<Delegator>,
    mcp: Mcp,
    skills: Skills,
    turns: Turns,
    /// Everything for the owner until delivered, and the live owner turn.
    outbox: Outbox<TurnEvent>,
    /// Reminders and scheduled tasks, and their scheduler.
    schedules: Schedules,
    /// Token usage per model call (`/usage`).
    usage: UsageLedger,
    /// Background delegations.
    jobs: Jobs,
}

impl Agent {
    /// Opens the database under `data_dir`, builds the providers, restores the saved
    /// provider/model choice and starts the services. `root` is the server's root cancellation
    /// token; `ext` carries the tool registry and an optional memory recall (defaults for the
    /// daemon, test doubles in tests).
    pub(crate) async fn start(
        config: Config,
        root: CancellationToken,
        ext: Extensions,
    ) -> Result<Agent, ApiError> {
        let base = Base::open(config, root).await?;
        let (memories, memory_auto) = base.memory().await?;
        let tools = ext.tools;
        let mcp = Mcp::start(
            &base.config,
            tools.clone(),
            McpSettings::default(),
            base.root.child_token(),
        );
        let delegator = Arc::new(Delegator::new(&base.config, base.tasks.clone()));
        let skills = Skills::new(base.config.general.skills_dir.clone());
        let outbox = Outbox::new(base.store.clone(), base.root.child_token());
        // A session's new title renames its Telegram topic (an outbox item for the adapter).
        let titles_outbox = outbox.clone();
        base.titler.on_titled(Arc::new(move |session, title| {
            let outbox = titles_outbox.clone();
            Box::pin(async move { outbox.title_topic(session, &title).await })
        }));
        let consolidation = Consolidation::start(
            &base.config,
            base.store.clone(),
            memories.clone(),
            outbox.clone(),
            &base.http,
            (&base.tasks, base.root.child_token()),
            memory_auto.after_run(),
            base.budget.clone(),
        )
        .await?;
        base.register_tools(&tools, &memories, &skills, &outbox)?;
        let history = History::open(
            base.store.clone(),
            base.config.general.timezone,
            base.config.general.locale,
            &base.tasks,
            base.root.child_token(),
        )
        .await;
        if let Some(semantic) = base.semantic(Corpus::History)? {
            history.attach_semantic(semantic);
        }
        crate::recall::register_tool(&tools, &history).map_err(ApiError::internal)?;
        crate::retention::spawn(
            &base.tasks,
            base.config.general.data_dir.clone(),
            Some(base.store.clone()),
            base.root.child_token(),
        );
        if !base.config.cli.is_empty() {
            delegator.set_bridge(base.bridge(&tools, &outbox).await?);
        }
        let turns = base.turns(TurnParts {
            tools: tools.clone(),
            recall: ext.recall.unwrap_or_else(|| memories.clone()),
            skills: skills.clone(),
            outbox: outbox.clone(),
            memory_auto: &memory_auto,
        })?;
        let (schedules, jobs) = base
            .schedules_and_jobs(&tools, &turns, &outbox, &delegator)
            .await?;
        let Base {
            store,
            tasks,
            root,
            models,
            sessions,
            usage,
            titler,
            ..
        } = base;
        Ok(Agent {
            inner: Arc::new(Inner {
                store,
                started: Instant::now(),
                root,
                tasks,
                sessions,
                models,
                titler,
                memories,
                history,
                memory_auto,
                consolidation,
                delegator,
                mcp,
                skills,
                turns,
                outbox,
                schedules,
                usage,
                jobs,
            }),
        })
    }

    /// The sessions (current, `#n` listing, resume, delete).
    pub(crate) fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// Provider/model selection.
    pub(crate) fn models(&self) -> &Models {
        &self.inner.models
    }

    /// The owner's delivery queue.
    pub(crate) fn outbox(&self) -> &Outbox<TurnEvent> {
        &self.inner.outbox
    }

    /// Session titles.
    pub(crate) fn titler(&self) -> &Titler {
        &self.inner.titler
    }

    /// The long-term memory.
    pub(crate) fn memories(&self) -> &Memories {
        &self.inner.memories
    }

    /// The conversation index and its search.
    pub(crate) fn history(&self) -> &History {
        &self.inner.history
    }

    /// Background notes and automatic memories.
    pub(crate) fn memory_auto(&self) -> &AutoMemory {
        &self.inner.memory_auto
    }

    /// Memory consolidation (undo, the owner's decisions on proposals).
    pub(crate) fn consolidation(&self) -> &Consolidation {
        &self.inner.consolidation
    }

    /// CLI delegation.
    pub(crate) fn delegator(&self) -> &Delegator {
        &self.inner.delegator
    }

    /// The skills (`/skills`).
    pub(crate) fn skills(&self) -> &Skills {
        &self.inner.skills
    }

    /// Reminders and scheduled tasks.
    pub(crate) fn schedules(&self) -> &Schedules {
        &self.inner.schedules
    }

    /// Token usage (`/usage`).
    pub(crate) fn usage(&self) -> &UsageLedger {
        &self.inner.usage
    }

    /// Background delegations (`/jobs`).
    pub(crate) fn jobs(&self) -> &Jobs {
        &self.inner.jobs
    }

    /// The turn loop.
    pub(crate) fn turns(&self) -> &Turns {
        &self.inner.turns
    }

    /// The approvals service (`Approve`, `Subscribe`; the delegation bridge asks through it).
    pub(crate) fn approvals(&self) -> &Approvals {
        self.inner.turns.approvals()
    }

    /// Stops background work (turns, titles, CLI supervision), closes the MCP servers and the
    /// database.
    pub(crate) async fn shutdown(&self) {
        self.inner.root.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        self.inner.mcp.shutdown().await;
        self.inner.store.close().await;
    }
}

/// What the services are built from: the config, the database, the one HTTP client (one
/// connection pool, one root store for every outbound API), the task tracker and root token
/// shutdown uses, and the services most others are handed.
struct Base {
    config: Config,
    store: Store,
    http: reqwest::Client,
    tasks: TaskTracker,
    root: CancellationToken,
    models: Models,
    sessions: Sessions,
    usage: UsageLedger,
    budget: crate::budget::Budget,
    titler: Titler,
}

/// What the turn loop is built over, besides the [`Base`].
struct TurnParts<'a> {
    tools: ToolRegistry,
    recall: Arc<dyn MemoryRecall>,
    skills: Skills,
    outbox: Outbox<TurnEvent>,
    /// Told after each round.
    memory_auto: &'a AutoMemory,
}

impl Base {
    /// Opens the database, builds the providers (and the `[titles]` client) and starts the
    /// model selection, sessions, usage ledger, budget and titles.
    async fn open(config: Config, root: CancellationToken) -> Result<Self, ApiError> {
        let db = config.general.data_dir.join("kernel.db");
        let store = Store::open(&db).await.map_err(ApiError::internal)?;
        let http = crate::http::client().map_err(ApiError::internal)?;
        let mut providers = BTreeMap::new();
        for (name, cfg) in config.providers.iter().filter(|(_, c)| c.available()) {
            let provider = crate::llm::build(cfg, &http).map_err(ApiError::internal)?;
            providers.insert(name.clone(), provider);
        }
        let tz = config.general.timezone;
        let tasks = TaskTracker::new();
        let models = Models::start(&config, providers, store.clone()).await?;
        let sessions = Sessions::new(store.clone(), models.clone(), tz);
        let usage = UsageLedger::new(&config, store.clone());
        let titles = match &config.titles {
            Some(t) if t.api_key.is_some() => Some(
                TitlesClient::new(t, &http)
                    .map_err(ApiError::internal)?
                    .recording(Arc::new(usage.clone())),
            ),
            _ => None,
        };
        let budget = crate::budget::Budget::with_system_clock(
            config.budget.clone(),
            tz,
            usage.clone(),
            store.clone(),
        );
        let titler = Titler::new(
            store.clone(),
            sessions.clone(),
            models.clone(),
            titles,
            tasks.clone(),
            root.clone(),
            budget.clone(),
        );
        Ok(Self {
            config,
            store,
            http,
            tasks,
            root,
            models,
            sessions,
            usage,
            budget,
            titler,
        })
    }

    /// The long-term memory (with its embeddings when configured) and auto memory.
    async fn memory(&self) -> Result<(Arc<Memories>, AutoMemory), ApiError> {
        let (config, store, root) = (&self.config, &self.store, &self.root);
        let memories = Arc::new(Memories::open(store.clone(), config.general.timezone).await);
        let memory_auto = AutoMemory::start(
            config,
            store.clone(),
            memories.clone(),
            &self.http,
            &self.tasks,
            root.child_token(),
            self.budget.clone(),
        )
        .await?;
        if let Some(semantic) = self.semantic(Corpus::Memories)? {
            memories.attach_semantic(semantic);
        }
        Ok((memories, memory_auto))
    }

    /// With `[embeddings]`: a started embedder of `corpus` (memories, or the conversation).
    fn semantic(&self, corpus: Corpus) -> Result<Option<Semantic>, ApiError> {
        let Some(e) = &self.config.embeddings else {
            return Ok(None);
        };
        let client = EmbeddingsClient::new(e, &self.http).map_err(ApiError::internal)?;
        let tag = match e.dimensions {
            Some(d) => format!("{}@{d}", e.model),
            None => e.model.clone(),
        };
        Ok(Some(Semantic::start_on(
            corpus,
            client,
            tag,
            self.store.clone(),
            e.recall_budget,
            &self.tasks,
            self.root.child_token(),
        )))
    }

    /// Registers the memory, skill and `send_file` tools.
    fn register_tools(
        &self,
        tools: &ToolRegistry,
        memories: &Arc<Memories>,
        skills: &Skills,
        outbox: &Outbox<TurnEvent>,
    ) -> Result<(), ApiError> {
        crate::memory::register_tools(tools, memories).map_err(ApiError::internal)?;
        crate::skills::register_tool(tools, skills).map_err(ApiError::internal)?;
        crate::send_file::register_tool(tools, &self.config, outbox).map_err(ApiError::internal)
    }

    /// Kernel as an MCP server for the CLIs it delegates to (a token per delegation).
    async fn bridge(
        &self,
        tools: &ToolRegistry,
        outbox: &Outbox<TurnEvent>,
    ) -> Result<crate::bridge::Bridge, ApiError> {
        let approval = crate::bridge::AsksApproval {
            tools: tools.clone(),
        };
        crate::bridge::Bridge::start(
            tools.clone(),
            Some(Arc::new(outbox.clone())),
            Arc::new(approval),
            self.config.general.locale,
            &self.tasks,
            self.root.child_token(),
        )
        .await
        .map_err(ApiError::internal)
    }

    /// The turn loop, with what it tells after each round (auto memory, the quiet-time trim)
    /// and after a fold (the summary rewriter).
    fn turns(&self, parts: TurnParts<'_>) -> Result<Turns, ApiError> {
        let (config, tasks, root) = (&self.config, &self.tasks, &self.root);
        let quiet = Quiet::start(
            tasks,
            root.child_token(),
            crate::quiet::Callbacks {
                trim: Box::new(kernel_common::heap::trim),
                shed: {
                    let store = self.store.clone();
                    Box::new(move || {
                        let store = store.clone();
                        Box::pin(async move {
                            // All of them: a quiet daemon keeps no connection, its page
                            // cache, prepared statements and worker thread; the next turn opens
                            // one (the pool's 60 s idle timeout closed it anyway).
                            store.close_idle_connections(0).await;
                        })
                    })
                },
            },
        );
        // Start-up is activity too: its burst is shed and trimmed once it has been quiet.
        quiet.poke();
        let rewriter = SummaryRewriter::start(
            config,
            self.store.clone(),
            &self.http,
            tasks,
            root.child_token(),
            self.budget.clone(),
        )?;
        let auto = parts.memory_auto.round_hook();
        Ok(Turns::new(
            config,
            TurnsSetup {
                tools: parts.tools,
                recall: parts.recall,
                skills: parts.skills,
                media: Media::new(config, &self.http),
                store: self.store.clone(),
                sessions: self.sessions.clone(),
                models: self.models.clone(),
                titler: self.titler.clone(),
                after_round: RoundHook::new(move || {
                    auto.notify();
                    quiet.poke();
                }),
                after_fold: rewriter.fold_hook(),
                root: root.clone(),
                tasks: tasks.clone(),
                outbox: parts.outbox,
                usage: self.usage.clone(),
                budget: self.budget.clone(),
                approvals: Approvals::new(&config.approvals),
            },
        ))
    }

    /// Reminders and scheduled tasks, the `/next` queue and background delegations, with their
    /// tools; the turns a crash cut off are reported before any of them can start a turn.
    async fn schedules_and_jobs(
        &self,
        tools: &ToolRegistry,
        turns: &Turns,
        outbox: &Outbox<TurnEvent>,
        delegator: &Arc<Delegator>,
    ) -> Result<(Schedules, Jobs), ApiError> {
        let (config, store, root, tasks) = (&self.config, &self.store, &self.root, &self.tasks);
        let schedules = Schedules::new(
            config,
            store.clone(),
            outbox.clone(),
            turns.clone(),
            root.clone(),
            tasks.clone(),
        );
        crate::schedule::register_tools(tools, &schedules).map_err(ApiError::internal)?;
        // Before any turn can start: turns a crash cut off are reported to the owner.
        turns.report_cut_off().await?;
        schedules.start();
        crate::ask::register_tool(turns.tools(), turns.asks(), config.general.ask_timeout)
            .map_err(ApiError::internal)?;
        turns.start_queue();
        let jobs = Jobs::start(
            config,
            store.clone(),
            outbox.clone(),
            turns.clone(),
            delegator.clone(),
            root.clone(),
            tasks.clone(),
        )
        .await
        .map_err(ApiError::internal)?;
        crate::delegate::register_background_tool(tools, delegator, Arc::new(jobs.clone()))
            .map_err(ApiError::internal)?;
        Ok((schedules, jobs))
    }
}
