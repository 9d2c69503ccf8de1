//! `Schedules`: reminders and scheduled tasks the owner asked for (by the `schedule_*` tools or
//! the schedule RPCs), stored in SQLite, and the scheduler that fires them.
//!
//! The scheduler is one tracked task that sleeps until the next due schedule (woken early when
//! schedules change), and stops with the root token. A `remind` schedule queues its message as
//! an outbox notice — in the same transaction that moves the schedule on — with no model call;
//! a `task` schedule stores a pending run in that transaction instead, and the task runner
//! (`task_runs`) runs a turn with its message as the prompt (`Turns::run_for_kernel`: it waits
//! for the owner's turn, and its answer goes through the outbox); a run cut off by shutdown or a
//! crash runs at the next start (at least once). What was due while agentd was down fires once
//! at start: a one-shot with its original time noted, a recurring one once for all its missed
//! runs, then on its schedule again.
//!
//! A `watch` schedule fires like a task, and its run is a bounded turn on the cheap model that
//! tells the owner only what it passes to `notify_owner` (`watch`). A paused schedule does not
//! fire; resumed, it fires next at its first time after now.

mod task_runs;
mod tools;
pub(crate) mod watch;
pub(crate) mod when;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kernel_common::Config;
use kernel_common::config::{Locale, WatchConfig};
use kernel_proto::words::ScheduleMode;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use crate::error::ApiError;
use crate::listing::Listing;
use crate::outbox::{ItemBody, NewItem, Outbox};
use crate::refusal::Listed;
use crate::store::schedules::{Firing, NewSchedule, ScheduleRow};
use crate::store::{Store, StoreError};
use crate::turn::{TurnEvent, Turns};
pub(crate) use tools::register_tools;
pub(crate) use when::{When, WhenError};

/// A run that fires later than this after its time says when it was due.
const LATE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// The pause before the scheduler tries the store again after a failure.
const RETRY: std::time::Duration = std::time::Duration::from_secs(5);
/// The most characters of a schedule's message.
const MAX_MESSAGE_CHARS: usize = 4000;

/// What a schedule does when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Its message is sent as is.
    Remind,
    /// A turn runs with its message as the prompt; the answer is sent.
    Task,
    /// A bounded turn on the cheap model runs with its message as the instruction; the owner
    /// hears only what it passes to `notify_owner`.
    Watch,
}

impl Mode {
    /// `"remind"`, `"task"` or `"watch"` (stored and on the wire).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Remind => ScheduleMode::Remind,
            Mode::Task => ScheduleMode::Task,
            Mode::Watch => ScheduleMode::Watch,
        }
        .as_str()
    }

    /// The mode named `name` (`""` is `remind`).
    pub(crate) fn parse(name: &str) -> Result<Mode, ScheduleError> {
        let name = name.trim();
        if name.is_empty() {
            return Ok(Mode::Remind);
        }
        match ScheduleMode::parse(name) {
            Some(ScheduleMode::Remind) => Ok(Mode::Remind),
            Some(ScheduleMode::Task) => Ok(Mode::Task),
            Some(ScheduleMode::Watch) => Ok(Mode::Watch),
            None => Err(ScheduleError::BadMode(name.to_owned())),
        }
    }
}

/// Why a schedule was not added or changed.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error(transparent)]
    When(#[from] WhenError),
    #[error("unknown mode {0:?}: use \"remind\", \"task\" or \"watch\"")]
    BadMode(String),
    #[error("a watch needs an instruction: say what to check and when to tell the owner")]
    NoInstruction,
    #[error(
        "a watch is recurring: give a 5-field cron expression for when it looks (e.g. \"*/30 * * * *\")"
    )]
    WatchNotRecurring,
    #[error(
        "a watch may run at most every {0} minutes: use a cron expression whose runs are at least {0} minutes apart (e.g. \"*/{0} * * * *\")"
    )]
    WatchTooOften(u32),
    #[error("the message is empty")]
    EmptyMessage,
    #[error("the message is longer than {MAX_MESSAGE_CHARS} characters")]
    LongMessage,
    /// The named model is not a configured one (the English reason names the choices).
    #[error("bad model: {0}")]
    BadModel(String),
    #[error("a reminder calls no model: give a model only with mode \"task\" or \"watch\"")]
    ModelForReminder,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ScheduleError> for ApiError {
    fn from(e: ScheduleError) -> Self {
        match e {
            ScheduleError::Store(e) => ApiError::internal(e),
            refused => ApiError::InvalidArgument(refused.to_string()),
        }
    }
}

/// A schedule as listings show it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScheduleInfo {
    /// `#n` in the latest listing (0 outside listings).
    pub number: u32,
    pub id: i64,
    pub next_fire: DateTime<Utc>,
    /// The next fire time, `YYYY-MM-DD HH:MM` in `general.timezone`.
    pub next_local: String,
    pub mode: Mode,
    pub message: String,
    /// The cron expression of a recurring schedule.
    pub cron: Option<String>,
    /// The `provider/model` a task runs on (`None`: the current one).
    pub model: Option<String>,
    /// It does not fire until resumed.
    pub paused: bool,
    /// A watch's last run and spend today (default for other modes).
    pub watch: watch::WatchState,
}

/// What [`Schedules::control`] does to one schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    Pause,
    Resume,
    Delete,
}

/// The schedules and their scheduler; a cheap `Clone` handle.
#[derive(Debug, Clone)]
pub(crate) struct Schedules {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    outbox: Outbox<TurnEvent>,
    turns: Turns,
    tz: Tz,
    locale: Locale,
    listing: Listing,
    /// `[watch]`: the bounds of a watch's run.
    watch: WatchConfig,
    /// The model watches run on when they name none (`[titles]`).
    cheap: Option<watch::turn::WatchModel>,
    /// Signalled when schedules change: the scheduler looks again.
    changed: Notify,
    /// Signalled when a task run is queued: the task runner looks again.
    run_queued: Notify,
    root: CancellationToken,
    tasks: TaskTracker,
}

impl Schedules {
    /// The schedules over `store`; firing queues on `outbox` and runs turns on `turns`.
    /// Nothing fires before [`Schedules::start`].
    pub(crate) fn new(
        config: &Config,
        store: Store,
        outbox: Outbox<TurnEvent>,
        turns: Turns,
        root: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                outbox,
                turns,
                tz: config.general.timezone,
                locale: config.general.locale,
                listing: Listing::new(Listed::Schedules),
                watch: config.watch.clone(),
                cheap: watch::cheap_model(config.watch.endpoint.as_ref()),
                changed: Notify::new(),
                run_queued: Notify::new(),
                root,
                tasks,
            }),
        }
    }

    /// Starts the scheduler and the task runner (tracked tasks until the root token is
    /// cancelled); the runner first runs what an earlier run of agentd left pending.
    pub(crate) fn start(&self) {
        let this = self.clone();
        self.inner
            .tasks
            .spawn(this.run().instrument(tracing::info_span!("scheduler")));
        self.start_task_runs();
    }

    /// Adds a schedule: `when` is read in the configured time zone (see [`When::parse`]); a
    /// task may name the `provider/model` it runs on (checked against the configured
    /// providers; stored as `provider/model`).
    pub(crate) async fn add(
        &self,
        when: &str,
        message: &str,
        mode: Mode,
        model: Option<&str>,
        session_id: Option<i64>,
    ) -> Result<ScheduleInfo, ScheduleError> {
        let message = message.trim();
        if message.is_empty() && mode == Mode::Watch {
            return Err(ScheduleError::NoInstruction);
        }
        if message.is_empty() {
            return Err(ScheduleError::EmptyMessage);
        }
        if message.chars().count() > MAX_MESSAGE_CHARS {
            return Err(ScheduleError::LongMessage);
        }
        let model = match model.map(str::trim).filter(|m| !m.is_empty()) {
            None => None,
            Some(_) if mode == Mode::Remind => return Err(ScheduleError::ModelForReminder),
            Some(spec) => {
                let named = self
                    .inner
                    .turns
                    .models()
                    .named(spec)
                    .map_err(ScheduleError::BadModel)?;
                Some(format!("{}/{}", named.name, named.model))
            }
        };
        let now = Utc::now();
        let parsed = When::parse(when, now, self.inner.tz)?;
        let next_fire = parsed
            .next_after(now, self.inner.tz)
            .ok_or_else(|| WhenError::Never(when.to_owned()))?;
        let (spec, expr) = match &parsed {
            When::At(at) => ("at", at.to_rfc3339()),
            When::Cron(expr) => ("cron", expr.clone()),
        };
        if mode == Mode::Watch {
            let When::Cron(expr) = &parsed else {
                return Err(ScheduleError::WatchNotRecurring);
            };
            let minimum = self.inner.watch.min_interval_minutes;
            let gap = watch::shortest_gap(expr, now, self.inner.tz);
            if gap.is_some_and(|g| g < chrono::TimeDelta::minutes(i64::from(minimum))) {
                return Err(ScheduleError::WatchTooOften(minimum));
            }
        }
        let row = self
            .inner
            .store
            .add_schedule_in(
                &NewSchedule {
                    spec: spec.to_owned(),
                    expr,
                    mode: mode.as_str().to_owned(),
                    message: message.to_owned(),
                    next_fire,
                    model,
                },
                session_id,
            )
            .await?;
        tracing::info!(id = row.id, spec, mode = mode.as_str(), next_fire = %row.next_fire, "schedule added");
        self.inner.changed.notify_one();
        Ok(self.info(&row, 0, watch::WatchState::default()))
    }

    /// The Telegram topic schedule `id` reports in (the one of the session it was set in);
    /// `None`: the main chat (also when the topic cannot be read).
    async fn topic_of(&self, id: i64) -> Option<i64> {
        self.inner
            .store
            .schedule_topic(id)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read a schedule's topic; it reports in the main chat");
                None
            })
    }

    /// Every schedule, the next due first.
    pub(crate) async fn list(&self) -> Result<Vec<ScheduleInfo>, StoreError> {
        let rows = self.inner.store.schedules().await?;
        let mut states = self.watch_states(&rows).await?;
        Ok(rows
            .iter()
            .map(|r| self.info(r, 0, states.remove(&r.id).unwrap_or_default()))
            .collect())
    }

    /// Every schedule numbered `#1..` (the mapping for [`Schedules::delete_numbered`]).
    pub(crate) async fn list_numbered(&self) -> Result<Vec<ScheduleInfo>, ApiError> {
        let rows = self
            .inner
            .store
            .schedules()
            .await
            .map_err(ApiError::internal)?;
        let mut states = self.watch_states(&rows).await.map_err(ApiError::internal)?;
        self.inner.listing.set(rows.iter().map(|r| r.id).collect());
        Ok(rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
                self.info(r, number, states.remove(&r.id).unwrap_or_default())
            })
            .collect())
    }

    /// Pauses, resumes or deletes one schedule: `#number` of the latest listing, or `id` when
    /// `number` is 0 (a watch notification's button). Whether it existed, and the schedule as
    /// it is now (`None` when deleted or gone). A resumed schedule fires next at its first
    /// time after now.
    pub(crate) async fn control(
        &self,
        number: u32,
        id: i64,
        action: Control,
    ) -> Result<(bool, Option<ScheduleInfo>), ApiError> {
        let id = if number == 0 {
            id
        } else {
            self.inner.listing.resolve_all(&[number])?[0]
        };
        let store = &self.inner.store;
        let Some(row) = store.schedule(id).await.map_err(ApiError::internal)? else {
            return Ok((false, None));
        };
        let found = match action {
            Control::Delete => {
                let deleted = self.delete(&[id]).await.map_err(ApiError::internal)?;
                return Ok((deleted > 0, None));
            }
            Control::Pause => store.set_schedule_paused(id, None).await,
            Control::Resume => {
                let now = Utc::now();
                let next = match row.spec.as_str() {
                    "cron" => When::Cron(row.expr.clone()).next_after(now, self.inner.tz),
                    // A one-shot resumed after its time fires now.
                    _ => Some(row.next_fire.max(now)),
                };
                store
                    .set_schedule_paused(id, Some(next.unwrap_or(now)))
                    .await
            }
        }
        .map_err(ApiError::internal)?;
        tracing::info!(id, ?action, found, "schedule controlled");
        self.inner.changed.notify_one();
        let now = store.schedule(id).await.map_err(ApiError::internal)?;
        let info = match now {
            Some(row) => {
                let mut states = self
                    .watch_states(std::slice::from_ref(&row))
                    .await
                    .map_err(ApiError::internal)?;
                let state = states.remove(&row.id).unwrap_or_default();
                Some(self.info(&row, 0, state))
            }
            None => None,
        };
        Ok((found, info))
    }

    /// Deletes schedules by `#n` of the latest listing; how many went.
    pub(crate) async fn delete_numbered(&self, numbers: &[u32]) -> Result<u64, ApiError> {
        let ids = self.inner.listing.resolve_all(numbers)?;
        self.delete(&ids).await.map_err(ApiError::internal)
    }

    /// Deletes schedules by id, and their task runs not yet done; how many schedules went.
    pub(crate) async fn delete(&self, ids: &[i64]) -> Result<u64, StoreError> {
        let deleted = self.inner.store.delete_schedules(ids).await?;
        tracing::info!(?ids, deleted, "schedules deleted");
        self.inner.changed.notify_one();
        Ok(deleted)
    }

    fn info(&self, row: &ScheduleRow, number: u32, watch: watch::WatchState) -> ScheduleInfo {
        ScheduleInfo {
            number,
            id: row.id,
            next_fire: row.next_fire,
            next_local: when::format_local(row.next_fire, self.inner.tz),
            mode: Mode::parse(&row.mode).unwrap_or(Mode::Remind),
            message: row.message.clone(),
            cron: (row.spec == "cron").then(|| row.expr.clone()),
            model: row.model.clone(),
            paused: row.paused,
            watch,
        }
    }

    /// Fires what is due, then sleeps until the next due schedule or a change; until shutdown.
    async fn run(self) {
        let inner = &self.inner;
        tracing::info!("scheduler started");
        loop {
            let changed = inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let pause = match self.fire_due().await {
                Ok(Some(next)) => (next - Utc::now()).to_std().unwrap_or_default(),
                Ok(None) => std::time::Duration::MAX,
                Err(e) => {
                    tracing::error!(error = %e, "the scheduler cannot read the schedules");
                    RETRY
                }
            };
            let sleep = async {
                match tokio::time::Instant::now().checked_add(pause) {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = inner.root.cancelled() => break,
                () = &mut changed => {}
                () = sleep => {}
            }
        }
        tracing::info!("scheduler stopped");
    }

    /// Fires every due schedule; the next fire time after that.
    async fn fire_due(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        loop {
            let mut rows = self.inner.store.schedules().await?;
            rows.retain(|r| !r.paused);
            let now = Utc::now();
            let due: Vec<&ScheduleRow> = rows.iter().filter(|r| r.next_fire <= now).collect();
            if due.is_empty() {
                return Ok(rows.first().map(|r| r.next_fire));
            }
            for row in due {
                if self.inner.root.is_cancelled() {
                    return Ok(None);
                }
                self.fire(row, now).await?;
            }
        }
    }

    /// Fires `row` (due at or before `now`) once and moves it on.
    async fn fire(&self, row: &ScheduleRow, now: DateTime<Utc>) -> Result<(), StoreError> {
        let inner = &self.inner;
        let next = match row.spec.as_str() {
            // Missed runs of a recurring schedule fire once; then it keeps its schedule.
            "cron" => When::Cron(row.expr.clone()).next_after(now.max(row.next_fire), inner.tz),
            _ => None,
        };
        let late = now - row.next_fire > LATE;
        let due_local = when::format_local(row.next_fire, inner.tz);
        let mode = Mode::parse(&row.mode).unwrap_or(Mode::Remind);
        tracing::info!(id = row.id, mode = mode.as_str(), late, next = ?next, "schedule due");
        match mode {
            Mode::Remind => {
                let mut text = row.message.clone();
                if late {
                    text.push_str("\n\n");
                    text.push_str(&late_note(inner.locale, &due_local));
                }
                let item = NewItem {
                    turn_id: format!("schedule-{}-{}", row.id, row.next_fire.timestamp_millis()),
                    body: ItemBody::Notice { text },
                    reply_to: None,
                    placeholder: None,
                    thread_id: self.topic_of(row.id).await,
                    outside: false,
                };
                if let Some(seq) = inner
                    .store
                    .fire_schedule(row.id, row.next_fire, next, Firing::Notice(&item))
                    .await?
                {
                    inner.outbox.stored(seq, item);
                }
            }
            Mode::Watch => {
                // The run builds its own prompt (the instruction, its memory, the time).
                let fired = inner
                    .store
                    .fire_schedule(
                        row.id,
                        row.next_fire,
                        next,
                        Firing::Task(&row.message, row.model.as_deref()),
                    )
                    .await?;
                if let Some(run) = fired {
                    tracing::info!(id = row.id, run, "watch run queued");
                    inner.run_queued.notify_one();
                }
            }
            Mode::Task => {
                let prompt = task_prompt(inner.locale, &due_local, late, &row.message);
                let fired = inner
                    .store
                    .fire_schedule(
                        row.id,
                        row.next_fire,
                        next,
                        Firing::Task(&prompt, row.model.as_deref()),
                    )
                    .await?;
                if let Some(run) = fired {
                    tracing::info!(id = row.id, run, "scheduled task queued");
                    inner.run_queued.notify_one();
                }
            }
        }
        Ok(())
    }
}

/// Said under a reminder that fires late (agentd was not running at its time).
fn late_note(locale: Locale, due: &str) -> String {
    match locale {
        Locale::Zh => format!("_（原定 {due}，当时 Kernel 未在运行）_"),
        Locale::En => format!("_(due {due}; Kernel was not running then)_"),
    }
}

/// The prompt of a scheduled task's turn (for the model: it knows why it runs).
fn task_prompt(locale: Locale, due: &str, late: bool, message: &str) -> String {
    match (locale, late) {
        (Locale::Zh, false) => format!("[定时任务，{due}] {message}"),
        (Locale::Zh, true) => format!("[定时任务，原定 {due}，当时 Kernel 未在运行] {message}"),
        (Locale::En, false) => format!("[scheduled task, {due}] {message}"),
        (Locale::En, true) => {
            format!("[scheduled task, due {due}; Kernel was not running then] {message}")
        }
    }
}
