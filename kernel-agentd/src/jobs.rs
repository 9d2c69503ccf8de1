//! `Jobs`: background delegations (`delegate_to_cli` with `background = true`). A job is a
//! [`Delegator`] run (so it keeps the CLI rules: one at a time, time limit, process group and
//! descendants, output file, secrets out of its environment) in a task tracked for shutdown, under
//! its own child of the root token, recorded in the `jobs` table.
//!
//! When a job ends by itself, the owner hears about it once: with no turn running, a short
//! follow-up turn (`Turns::run_for_kernel`, `Origin::Kernel`, delivered through the outbox like a
//! scheduled task) summarises the result — its prompt, carrying the result, is stored in the
//! session, so the next turn has it in context; with a turn running, the raw status goes out as
//! an outbox notice (queued with the job's end, one transaction) and the same result is stored as
//! a round of the job's own session once no turn runs in it (whatever runs elsewhere). A job the owner cancels (`/jobs cancel #n`)
//! just ends. A job cut off by agentd stopping — or left `running` by a crash — is marked
//! `interrupted` with a notice for the owner (at shutdown, else at the next start; the crash's
//! process groups are reaped by `delegate::reaper` as for any delegation).

mod texts;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kernel_common::Config;
use kernel_common::config::Locale;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use crate::delegate::{Background, DelegateRequest, DelegateResult, Delegator};
use crate::error::ApiError;
use crate::listing::Listing;
use crate::outbox::{ItemBody, NewItem, Outbox};
use crate::refusal::Listed;
use crate::store::jobs::{JobEnd, JobRow};
use crate::store::{Store, StoreError};
use crate::tools::ToolEvents;
use crate::turn::{TurnEvent, Turns};

/// How many ended jobs `/jobs` shows after the running ones.
pub(crate) const RECENT_JOBS: u32 = 10;

/// A job as listings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobInfo {
    /// `#n` in the latest listing (0 outside listings).
    pub number: u32,
    pub id: i64,
    pub cli: String,
    pub task: String,
    /// `running`, `done`, `failed`, `cancelled` or `interrupted`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    /// When it started, `YYYY-MM-DD HH:MM` in `general.timezone`.
    pub started_local: String,
    pub output_path: String,
}

/// The background jobs; a cheap `Clone` handle.
#[derive(Debug, Clone)]
pub(crate) struct Jobs {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    outbox: Outbox<TurnEvent>,
    turns: Turns,
    delegator: Arc<Delegator>,
    tz: Tz,
    locale: Locale,
    listing: Listing,
    /// The running jobs' tokens (children of `root`), by job id.
    running: Mutex<HashMap<i64, CancellationToken>>,
    root: CancellationToken,
    tasks: TaskTracker,
}

impl Jobs {
    /// The jobs over `store`, run by `delegator`; their results reach the owner through `turns`
    /// and `outbox`. Jobs a previous agentd left `running` are marked interrupted and the owner
    /// is told (an outbox notice each).
    pub(crate) async fn start(
        config: &Config,
        store: Store,
        outbox: Outbox<TurnEvent>,
        turns: Turns,
        delegator: Arc<Delegator>,
        root: CancellationToken,
        tasks: TaskTracker,
    ) -> Result<Jobs, StoreError> {
        let locale = config.general.locale;
        let queued = store
            .interrupt_jobs(|job, thread_id| NewItem {
                thread_id,
                ..notice(job, texts::interrupted(locale, job))
            })
            .await?;
        for (seq, item) in queued {
            tracing::warn!(seq, turn = %item.turn_id, "a background job was interrupted by the last stop");
            outbox.stored(seq, item);
        }
        Ok(Jobs {
            inner: Arc::new(Inner {
                store,
                outbox,
                turns,
                delegator,
                tz: config.general.timezone,
                locale,
                listing: Listing::new(Listed::Jobs),
                running: Mutex::new(HashMap::new()),
                root,
                tasks,
            }),
        })
    }

    /// Checks `request`, records it and starts it in the background; its job id.
    pub(crate) async fn launch(&self, request: DelegateRequest) -> Result<i64, String> {
        let inner = &self.inner;
        let (cli, cwd) = inner.delegator.check(&request).map_err(|e| e.to_string())?;
        let job = inner
            .store
            .add_job(&cli, &request.task, &cwd)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "cannot record a background job");
                "the job could not be recorded".to_owned()
            })?;
        if let Some(session) = request.session_id
            && let Err(e) = inner.store.set_job_session(job.id, session).await
        {
            tracing::warn!(job = job.id, error = %e, "cannot record the job's session; it reports in the main chat");
        }
        let cancel = inner.root.child_token();
        self.running().insert(job.id, cancel.clone());
        tracing::info!(job = job.id, cli = %cli, "background job started");
        let (this, id) = (self.clone(), job.id);
        inner.tasks.spawn(
            this.run(job, request, cancel)
                .instrument(tracing::info_span!("job", id)),
        );
        Ok(id)
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<i64, CancellationToken>> {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Running jobs, then the latest ended ones, numbered `#1..` (the mapping for
    /// [`Jobs::cancel_numbered`]).
    pub(crate) async fn list_numbered(&self) -> Result<Vec<JobInfo>, ApiError> {
        let rows = self
            .inner
            .store
            .jobs(RECENT_JOBS)
            .await
            .map_err(ApiError::internal)?;
        self.inner.listing.set(rows.iter().map(|r| r.id).collect());
        Ok(rows
            .iter()
            .enumerate()
            .map(|(i, r)| self.info(r, u32::try_from(i + 1).unwrap_or(u32::MAX)))
            .collect())
    }

    /// Cancels the job `#number` of the latest listing (its whole process tree is killed);
    /// whether it was running.
    pub(crate) async fn cancel_numbered(&self, number: u32) -> Result<bool, ApiError> {
        let id = self.inner.listing.resolve(number)?;
        Ok(self.cancel(id))
    }

    /// Cancels job `id`; whether it was running.
    pub(crate) fn cancel(&self, id: i64) -> bool {
        let token = self.running().get(&id).cloned();
        tracing::info!(job = id, running = token.is_some(), "job cancel requested");
        token.map(|t| t.cancel()).is_some()
    }

    fn info(&self, row: &JobRow, number: u32) -> JobInfo {
        JobInfo {
            number,
            id: row.id,
            cli: row.cli.clone(),
            task: row.task.clone(),
            status: row.status.clone(),
            exit_code: row.exit_code,
            started_at: row.started_at,
            ended_at: row.ended_at,
            started_local: crate::schedule::when::format_local(row.started_at, self.inner.tz),
            output_path: row.output_path.clone(),
        }
    }

    /// Runs job `job` to its end and reports it.
    async fn run(self, job: JobRow, request: DelegateRequest, cancel: CancellationToken) {
        let inner = &self.inner;
        let result = inner
            .delegator
            .delegate(request, &cancel, &ToolEvents::default())
            .await;
        self.running().remove(&job.id);
        let end = ending(&job, result, &cancel, &inner.root);
        tracing::info!(job = job.id, status = %end.status, exit_code = ?end.exit_code, "background job ended");
        let ended = JobRow {
            status: end.status.clone(),
            exit_code: end.exit_code,
            output_path: end.output_path.clone(),
            output: end.output.clone(),
            ended_at: Some(Utc::now()),
            ..job
        };
        if let Err(e) = self.report(&ended, &end).await {
            tracing::error!(job = ended.id, error = %e, "cannot report a background job's end");
        }
    }

    /// The session job `id` was started from and its Telegram topic, if it lives in one.
    async fn origin(&self, id: i64) -> (Option<i64>, Option<i64>) {
        let store = &self.inner.store;
        let session = store.job_session(id).await.unwrap_or_else(|e| {
            tracing::warn!(job = id, error = %e, "cannot read the job's session");
            None
        });
        let thread = match session {
            Some(session) => store.session_topic(session).await.unwrap_or(None),
            None => None,
        };
        (session, thread)
    }

    /// Stores the end of `job` and tells the owner as the module doc says (in the Telegram
    /// topic of the session that started it, if it lives in one).
    async fn report(&self, job: &JobRow, end: &JobEnd) -> Result<(), ApiError> {
        let inner = &self.inner;
        let locale = inner.locale;
        let (session, thread) = self.origin(job.id).await;
        let notice = |job: &JobRow, text: String| NewItem {
            thread_id: thread,
            ..notice(job, text)
        };
        let store_end = |item: Option<NewItem>| async move {
            let seq = inner
                .store
                .end_job(job.id, end, item.as_ref())
                .await
                .map_err(ApiError::internal)?;
            if let (Some(seq), Some(item)) = (seq, item) {
                inner.outbox.stored(seq, item);
            }
            Ok::<_, ApiError>(seq.is_some())
        };
        use kernel_proto::words::JobStatus;
        match JobStatus::parse(&end.status) {
            Some(JobStatus::Interrupted) => {
                store_end(Some(notice(job, texts::interrupted(locale, job)))).await?;
            }
            Some(JobStatus::Cancelled) => {
                store_end(None).await?;
            }
            _ if inner.turns.is_running() => {
                let raw = texts::raw_status(locale, job);
                if store_end(Some(notice(job, raw.clone()))).await? {
                    let prompt = texts::follow_up_prompt(locale, job);
                    inner.turns.record_for_kernel(prompt, raw, session).await?;
                }
            }
            _ => {
                if store_end(None).await? {
                    let prompt = texts::follow_up_prompt(locale, job);
                    match inner.turns.run_for_kernel_outside(prompt, session).await? {
                        Some(_events) => {
                            tracing::info!(job = job.id, "the job's follow-up turn started")
                        }
                        None => {
                            tracing::info!(job = job.id, "shutdown before the job's follow-up turn")
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Background for Jobs {
    async fn start(&self, request: DelegateRequest) -> Result<i64, String> {
        self.launch(request).await
    }
}

/// How a job ended, from the delegation's result and who cancelled it.
fn ending(
    job: &JobRow,
    result: Result<DelegateResult, crate::delegate::DelegateError>,
    cancel: &CancellationToken,
    root: &CancellationToken,
) -> JobEnd {
    use kernel_proto::words::JobStatus;
    let status = if root.is_cancelled() {
        JobStatus::Interrupted
    } else if cancel.is_cancelled() {
        JobStatus::Cancelled
    } else {
        match &result {
            Ok(r) if r.ok => JobStatus::Done,
            _ => JobStatus::Failed,
        }
    };
    let status = status.as_str();
    match result {
        Ok(r) => JobEnd {
            status: status.to_owned(),
            exit_code: r.exit_code,
            output_path: r.output_path,
            output: r.output,
        },
        Err(e) => JobEnd {
            status: status.to_owned(),
            exit_code: None,
            output_path: job.output_path.clone(),
            output: e.to_string(),
        },
    }
}

/// An outbox notice about `job`.
fn notice(job: &JobRow, text: String) -> NewItem {
    NewItem {
        turn_id: format!("job-{}-{}", job.id, job.status),
        body: ItemBody::Notice { text },
        reply_to: None,
        placeholder: None,
        thread_id: None,
        outside: true,
    }
}
