//! Memory consolidation: a background job that, after auto memory ran (at most every
//! `[memory.consolidation] interval_hours`, daily by default), shows a cheap model the newest
//! memories (ids, kind, date, text) and applies its plan (`plan`): near-duplicate automatic
//! memories merged into one (the merged text, the earliest date), done or past tasks retired, a
//! memory a newer one contradicts superseded. Nothing is deleted: what leaves recall is set aside
//! with its id and every change is logged (`store::consolidation`), so [`Consolidation::undo`]
//! puts a run back. The owner's memories are never changed by the job: a merge touching one is
//! only proposed (an outbox notice with merge / keep buttons, [`Consolidation::decide`]).
//!
//! Isolation as auto memory's: one run at a time in one tracked worker task, never on a turn's
//! path, shutdown cancels it; no model call while over a `[budget]` limit; a provider error, a
//! stall, a malformed plan or one naming a memory that is not a candidate (or an owner's memory
//! where only a proposal may name it) changes nothing — the whole plan is checked first, then
//! applied in one transaction. Disabled, the job makes no model call at all.

mod notice;
pub(crate) mod plan;

use std::sync::{Arc, Mutex};

use chrono::Utc;
use chrono_tz::Tz;
use kernel_common::config::{ConsolidationConfig, Locale};
use kernel_common::{Config, Redactor};
use kernel_proto::words::RunOutcome;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::llm::titles::TitlesClient;
use crate::memory::{Memories, SearchMode, segment};
use crate::outbox::{ItemBody, NewItem, Outbox};
use crate::store::consolidation::{Applied, Changes, Decided, MergeStep, NewProposal, RunRow};
use crate::store::{Store, StoreError};
use crate::turn::TurnEvent;

/// The `settings` key of when the job first started (RFC 3339): the first run waits for
/// `interval` from then, as every later run does from the last.
const SINCE_KEY: &str = "memory_consolidation.since";

/// The purpose the job's model calls are booked under in the usage ledger.
pub(crate) const PURPOSE: &str = "consolidation";

/// What `GetStatus` says about the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConsolidationStatus {
    pub enabled: bool,
    /// The job's last run (the owner's merges not counted).
    pub last: Option<RunRow>,
}

/// The consolidation job. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub(crate) struct Consolidation {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    memories: Arc<Memories>,
    /// Set only when the job is enabled.
    client: Option<TitlesClient>,
    config: ConsolidationConfig,
    tz: Tz,
    locale: Locale,
    redactor: Redactor,
    outbox: Outbox<TurnEvent>,
    /// When the job first started (the first run is due `interval` after it).
    since: chrono::DateTime<Utc>,
    last: Mutex<Option<RunRow>>,
    budget: crate::budget::Budget,
}

impl Consolidation {
    /// The job for `config`; when enabled, its worker is spawned on `tasks`, runs when
    /// `after_auto` is notified (auto memory ran) and stops when `cancel` is cancelled.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn start(
        config: &Config,
        store: Store,
        memories: Arc<Memories>,
        outbox: Outbox<TurnEvent>,
        http: &reqwest::Client,
        (tasks, cancel): (&TaskTracker, CancellationToken),
        after_auto: Arc<Notify>,
        budget: crate::budget::Budget,
    ) -> Result<Consolidation, ApiError> {
        let settings = config.memory_consolidation.clone();
        let client = TitlesClient::for_background(
            settings.endpoint.as_ref().filter(|_| settings.enabled),
            http,
            Arc::new(budget.ledger().clone()),
        )
        .map_err(ApiError::internal)?;
        let last = store
            .last_consolidation_run()
            .await
            .map_err(ApiError::internal)?;
        let since = match store.get_setting(SINCE_KEY).await {
            Ok(Some(v)) => chrono::DateTime::parse_from_rfc3339(&v)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_else(|_| Utc::now()),
            Ok(None) => {
                let now = Utc::now();
                store
                    .set_setting(SINCE_KEY, &now.to_rfc3339())
                    .await
                    .map_err(ApiError::internal)?;
                now
            }
            Err(e) => return Err(ApiError::internal(e)),
        };
        let job = Consolidation {
            inner: Arc::new(Inner {
                store,
                memories,
                client,
                config: settings,
                tz: config.general.timezone,
                locale: config.general.locale,
                redactor: config.redactor(),
                outbox,
                since,
                last: Mutex::new(last),
                budget,
            }),
        };
        if job.inner.client.is_some() {
            let worker = job.clone();
            tasks.spawn(async move { worker.work(after_auto, cancel).await });
            tracing::info!(
                interval_hours = job.inner.config.interval.as_secs() / 3600,
                "memory consolidation on"
            );
        } else {
            tracing::info!("memory consolidation off");
        }
        Ok(job)
    }

    /// Whether the job runs, and its last run.
    pub(crate) fn status(&self) -> ConsolidationStatus {
        ConsolidationStatus {
            enabled: self.inner.client.is_some(),
            last: lock(&self.inner.last).clone(),
        }
    }

    async fn work(self, after_auto: Arc<Notify>, cancel: CancellationToken) {
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = after_auto.notified() => {}
            }
            if !self.due() {
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                result = self.run() => if let Err(e) = result {
                    tracing::warn!(error = %e, "memory consolidation: the run failed");
                },
            }
        }
    }

    /// Whether `interval` has passed since the last run (or, before the first, since the job
    /// first started).
    fn due(&self) -> bool {
        let last = lock(&self.inner.last).as_ref().map(|r| r.at);
        let from = last.unwrap_or(self.inner.since);
        (Utc::now() - from)
            .to_std()
            .is_ok_and(|age| age >= self.inner.config.interval)
    }

    /// One run: the model's plan over the newest memories, checked as a whole, then applied.
    async fn run(&self) -> Result<(), StoreError> {
        let inner = &self.inner;
        let Some(client) = &inner.client else {
            return Ok(());
        };
        let candidates = inner
            .store
            .recent_memories(inner.config.max_candidates)
            .await?;
        if candidates.iter().filter(|m| m.auto).count() < 2 {
            return Ok(());
        }
        if inner.budget.over().await.is_some() {
            tracing::info!("memory consolidation: over a budget limit; no model call");
            return Ok(());
        }
        let today = Utc::now()
            .with_timezone(&inner.tz)
            .format("%Y-%m-%d")
            .to_string();
        let prompt = plan::prompt(&candidates, &today, inner.tz);
        tracing::info!(
            candidates = candidates.len(),
            purpose = PURPOSE,
            "memory consolidation: asking for a plan"
        );
        let answer = match client
            .complete(
                crate::conversation::Purpose::Consolidation,
                plan::SYSTEM,
                prompt,
                inner.config.timeout,
            )
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                let e = e.redacted(&inner.redactor);
                tracing::warn!(error = %e, "memory consolidation: the call failed; nothing changed");
                return self.record_failure(Unchanged::Failed).await;
            }
        };
        let plan = match plan::parse(&answer).and_then(|p| {
            plan::validate(&p, &candidates)?;
            Ok(p)
        }) {
            Ok(plan) => plan,
            Err(e) => {
                tracing::warn!(error = %e, "memory consolidation: the plan is refused; nothing changed");
                return self.record_failure(Unchanged::Malformed).await;
            }
        };
        let changes = self.changes(&plan, &candidates).await;
        let indexed = inner.memories.mode() == SearchMode::Fts5;
        match inner.store.apply_consolidation(&changes, indexed).await? {
            Applied::Done(run, proposals) => {
                tracing::info!(
                    merged = run.merged,
                    retired = run.retired,
                    superseded = run.superseded,
                    proposed = run.proposed,
                    "memory consolidation: applied"
                );
                self.after_change(&changes.named());
                for (id, p) in proposals.iter().zip(&changes.proposals) {
                    self.propose(*id, p).await;
                }
                *lock(&inner.last) = Some(run);
                Ok(())
            }
            Applied::Stale(id) => {
                tracing::info!(
                    memory = id,
                    "memory consolidation: a memory changed meanwhile; nothing changed"
                );
                self.record_failure(Unchanged::Malformed).await
            }
        }
    }

    /// The store's form of a checked `plan`.
    async fn changes(&self, plan: &plan::Plan, candidates: &[crate::memory::MemoryRow]) -> Changes {
        let indexed = self.inner.memories.mode() == SearchMode::Fts5;
        let text_of = |id: i64| {
            candidates
                .iter()
                .find(|m| m.id == id)
                .map(|m| m.text.clone())
                .unwrap_or_default()
        };
        Changes {
            merges: plan
                .merge
                .iter()
                .map(|g| MergeStep {
                    ids: g.ids.clone(),
                    text: g.text.trim().to_owned(),
                    terms: indexed.then(|| segment::index_terms(g.text.trim())),
                })
                .collect(),
            retire: plan.retire.clone(),
            supersede: plan.supersede.iter().map(|s| (s.old, s.new)).collect(),
            proposals: plan
                .propose
                .iter()
                .map(|g| NewProposal {
                    memories: g.ids.iter().map(|&id| (id, text_of(id))).collect(),
                    text: g.text.trim().to_owned(),
                })
                .collect(),
        }
    }

    /// Tells the owner about proposal `id` (a notice with merge / keep buttons).
    async fn propose(&self, id: i64, p: &NewProposal) {
        let item = NewItem {
            turn_id: format!("memory-proposal-{id}"),
            body: ItemBody::MemoryProposal {
                text: notice::proposal(&p.memories, &p.text, self.inner.locale),
                proposal: id,
            },
            reply_to: None,
            placeholder: None,
            thread_id: None,
            outside: false,
        };
        if let Err(e) = self.inner.outbox.queue(item).await {
            tracing::warn!(error = %e, proposal = id, "memory consolidation: cannot queue a proposal");
        }
    }

    /// The owner pressed merge (`merge_it`) or keep on proposal `id`. `Stale`: unknown, decided
    /// already, or a memory of it changed since — nothing changed.
    pub(crate) async fn decide(&self, id: i64, merge_it: bool) -> Result<Decided, ApiError> {
        let inner = &self.inner;
        let indexed = inner.memories.mode() == SearchMode::Fts5;
        let pending = inner
            .store
            .pending_proposal(id)
            .await
            .map_err(ApiError::internal)?;
        let terms = match &pending {
            Some(p) if indexed && merge_it => Some(segment::index_terms(p.text.trim())),
            Some(_) => None,
            None => return Ok(Decided::Stale),
        };
        let decided = inner
            .store
            .decide_proposal(id, merge_it, terms, indexed)
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(proposal = id, ?decided, "memory proposal decided");
        if let (Decided::Merged(_), Some(p)) = (&decided, pending) {
            let ids: Vec<i64> = p.memories.iter().map(|(m, _)| *m).collect();
            self.after_change(&ids);
        }
        Ok(decided)
    }

    /// Undoes run `run_id` (0: the newest one not undone that changed something); the run
    /// undone and how many memories came back, or `None` when there was nothing to undo.
    pub(crate) async fn undo(&self, run_id: i64) -> Result<Option<(i64, usize)>, ApiError> {
        let inner = &self.inner;
        let indexed = inner.memories.mode() == SearchMode::Fts5;
        let Some((run, back)) = inner
            .store
            .undo_consolidation(run_id, indexed)
            .await
            .map_err(ApiError::internal)?
        else {
            return Ok(None);
        };
        if indexed && !back.is_empty() {
            let entries: Vec<(i64, String)> = back
                .iter()
                .map(|(id, text)| (*id, segment::index_terms(text)))
                .collect();
            if let Err(e) = inner.store.index_memories(&entries).await {
                // The next start indexes what the index lacks.
                tracing::warn!(error = %e, "memory consolidation: restored memories not indexed yet");
            }
        }
        let ids: Vec<i64> = back.iter().map(|(id, _)| *id).collect();
        self.after_change(&ids);
        if let Some(last) = lock(&inner.last).as_mut()
            && last.id == run
        {
            last.undone = true;
        }
        tracing::info!(run, restored = back.len(), "memory consolidation undone");
        Ok(Some((run, back.len())))
    }

    /// Vectors follow the changed texts: `changed` drop theirs, and the embedder makes the
    /// missing ones.
    fn after_change(&self, changed: &[i64]) {
        if let Some(semantic) = self.inner.memories.semantic() {
            semantic.forget(changed);
            semantic.wake();
        }
    }

    async fn record_failure(&self, outcome: Unchanged) -> Result<(), StoreError> {
        let outcome = outcome.word().as_str();
        let run = self.inner.store.log_consolidation_failure(outcome).await?;
        *lock(&self.inner.last) = Some(run);
        Ok(())
    }
}

/// Why a run changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unchanged {
    /// The plan was unusable or named a memory it may not change (or one changed meanwhile).
    Malformed,
    /// The provider failed or stalled.
    Failed,
}

impl Unchanged {
    /// The run's outcome on the wire.
    fn word(self) -> RunOutcome {
        match self {
            Unchanged::Malformed => RunOutcome::Malformed,
            Unchanged::Failed => RunOutcome::Failed,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
