//! Auto memory: a background job that reads the messages stored since its last run and asks a
//! cheap model (`[memory_auto]`, the `[titles]` endpoint by default) for structured JSON
//! (topics, preferences, decisions, tasks, facts, each with an importance 1–5). It appends the
//! day's note (`daily_notes`, one per local day) and turns items at or above `min_importance`
//! into memories with `source = auto`, after de-duplication (`remember`); automatic memories
//! are capped at `max_auto`.
//!
//! When: every `interval` user messages (the turn loop's [`RoundHook`] wakes the worker, which
//! counts them in the store), on `/new`, and at local midnight (`general.timezone`). One run at a
//! time, in one tracked worker task, never on a turn's path; shutdown cancels it. A malformed
//! answer is retried once, then those messages are skipped (logged); a provider error or a stall
//! (`timeout_secs`) changes nothing, and the next attempt waits for `interval` more messages.
//! Disabled, the job makes no model call at all.

mod extract;
mod note;
mod origin;
mod outside;
mod remember;
pub(crate) mod similar;
mod transcript;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeZone as _, Utc};
use chrono_tz::Tz;
use kernel_common::config::{Locale, MemoryAutoConfig};
use kernel_common::{Config, Redactor};
use kernel_proto::words::RunOutcome;
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::llm::LlmError;
use crate::llm::titles::TitlesClient;
use crate::memory::Memories;
use crate::store::memory_auto::DailyNote;
use crate::store::{Store, StoreError};
use crate::turn::RoundHook;
use crate::usage::Purpose;
use extract::{Extraction, Malformed};
use remember::Remembered;

/// Most messages one run reads (the rest wait for the next run).
const MAX_MESSAGES: usize = 400;
/// The `settings` key of the last message id the job has read.
const AFTER_KEY: &str = "memory_auto.after";
/// The `settings` key of the last run (JSON).
const LAST_RUN_KEY: &str = "memory_auto.last_run";

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The note and memories were updated.
    Ok,
    /// The model's answer was malformed twice; those messages were skipped.
    Malformed,
    /// The provider failed or stalled; nothing changed.
    Failed,
}

impl Outcome {
    /// The wire word: `ok`, `malformed` or `failed`.
    pub(crate) fn word(self) -> RunOutcome {
        match self {
            Outcome::Ok => RunOutcome::Ok,
            Outcome::Malformed => RunOutcome::Malformed,
            Outcome::Failed => RunOutcome::Failed,
        }
    }
}

/// The job's last run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LastRun {
    pub at: DateTime<Utc>,
    /// Memories added.
    pub added: u32,
    /// Existing memories found again (refreshed, not added).
    pub refreshed: u32,
    pub outcome: Outcome,
}

/// What `GetStatus` says about the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AutoStatus {
    pub enabled: bool,
    pub last: Option<LastRun>,
}

/// Why an extraction gave nothing.
#[derive(Debug, thiserror::Error)]
enum ExtractError {
    #[error(transparent)]
    Malformed(#[from] Malformed),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// The auto-memory job. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub(crate) struct AutoMemory {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    memories: Arc<Memories>,
    /// Set only when the job is enabled.
    client: Option<TitlesClient>,
    config: MemoryAutoConfig,
    redactor: Redactor,
    tz: Tz,
    locale: Locale,
    wake: Notify,
    /// Run even below `interval` (`/new`).
    forced: AtomicBool,
    /// New user turns counted when the last attempt failed: the next waits for `interval` more.
    failed_at: Mutex<Option<u64>>,
    last: Mutex<Option<LastRun>>,
    /// Over a `[budget]` limit no extraction call is made.
    budget: crate::budget::Budget,
    /// Notified after each run that updated the memories (memory consolidation follows).
    after_run: Arc<Notify>,
}

impl AutoMemory {
    /// The job for `config`; when enabled, its worker is spawned on `tasks` and stops when
    /// `cancel` is cancelled. The first start reads only what is stored from then on.
    pub(crate) async fn start(
        config: &Config,
        store: Store,
        memories: Arc<Memories>,
        http: &reqwest::Client,
        tasks: &TaskTracker,
        cancel: CancellationToken,
        budget: crate::budget::Budget,
    ) -> Result<AutoMemory, ApiError> {
        let settings = config.memory_auto.clone();
        let client = TitlesClient::for_background(
            settings.endpoint.as_ref().filter(|_| settings.enabled),
            http,
            Arc::new(budget.ledger().clone()),
        )
        .map_err(ApiError::internal)?;
        let last = match store.get_setting(LAST_RUN_KEY).await {
            Ok(Some(json)) => serde_json::from_str(&json).ok(),
            Ok(None) => None,
            Err(e) => return Err(ApiError::internal(e)),
        };
        let job = AutoMemory {
            inner: Arc::new(Inner {
                store,
                memories,
                client,
                config: settings,
                redactor: config.redactor(),
                tz: config.general.timezone,
                locale: config.general.locale,
                wake: Notify::new(),
                forced: AtomicBool::new(false),
                failed_at: Mutex::new(None),
                last: Mutex::new(last),
                budget,
                after_run: Arc::new(Notify::new()),
            }),
        };
        if job.inner.client.is_some() {
            job.after().await.map_err(ApiError::internal)?;
            let worker = job.clone();
            tasks.spawn(async move { worker.work(cancel).await });
            tracing::info!(interval = job.inner.config.interval, "auto memory on");
        } else {
            tracing::info!("auto memory off");
        }
        Ok(job)
    }

    /// The turn loop's hook: wakes the worker after each completed round.
    pub(crate) fn round_hook(&self) -> RoundHook {
        let job = self.clone();
        RoundHook::new(move || job.inner.wake.notify_one())
    }

    /// Notified after each run that updated the memories.
    pub(crate) fn after_run(&self) -> Arc<Notify> {
        self.inner.after_run.clone()
    }

    /// A new session began: summarise what the last one left, whatever its length.
    pub(crate) fn session_ended(&self) {
        if self.inner.client.is_some() {
            self.inner.forced.store(true, Ordering::SeqCst);
            self.inner.wake.notify_one();
        }
    }

    /// Whether the job runs, and its last run.
    pub(crate) fn status(&self) -> AutoStatus {
        AutoStatus {
            enabled: self.inner.client.is_some(),
            last: *lock(&self.inner.last),
        }
    }

    /// The note of `date` (`YYYY-MM-DD`; default: today in the configured time zone): the date
    /// and the note, if there is one.
    pub(crate) async fn note(&self, date: &str) -> Result<(String, Option<DailyNote>), ApiError> {
        let date = match date.trim() {
            "" => self.local_date(Utc::now()),
            d => NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .map_err(|_| {
                    ApiError::InvalidArgument(format!("\"{d}\" is not a YYYY-MM-DD date"))
                })?
                .format("%Y-%m-%d")
                .to_string(),
        };
        let note = self
            .inner
            .store
            .daily_note(&date)
            .await
            .map_err(ApiError::internal)?;
        Ok((date, note))
    }

    fn local_date(&self, time: DateTime<Utc>) -> String {
        time.with_timezone(&self.inner.tz)
            .format("%Y-%m-%d")
            .to_string()
    }

    /// The last message id read; set to the newest one on the very first start.
    async fn after(&self) -> Result<i64, StoreError> {
        let store = &self.inner.store;
        if let Some(v) = store.get_setting(AFTER_KEY).await? {
            return Ok(v.parse().unwrap_or(0));
        }
        let (_, newest) = store.user_turns_after(0).await?;
        store.set_setting(AFTER_KEY, &newest.to_string()).await?;
        Ok(newest)
    }

    async fn work(self, cancel: CancellationToken) {
        loop {
            let mut force = false;
            tokio::select! {
                () = cancel.cancelled() => return,
                () = self.inner.wake.notified() => {}
                () = tokio::time::sleep(until_midnight(Utc::now(), self.inner.tz)) => force = true,
            }
            force |= self.inner.forced.swap(false, Ordering::SeqCst);
            tokio::select! {
                () = cancel.cancelled() => return,
                result = self.run(force) => if let Err(e) = result {
                    tracing::warn!(error = %e, "auto memory: the run failed");
                },
            }
        }
    }

    /// One run: reads what is new (when `force`, or when `interval` user turns are new) and
    /// updates the note and memories.
    async fn run(&self, force: bool) -> Result<(), StoreError> {
        let inner = &self.inner;
        let Some(client) = &inner.client else {
            return Ok(());
        };
        let store = &inner.store;
        let after = self.after().await?;
        let (pending, _) = store.user_turns_after(after).await?;
        let interval = inner.config.interval as u64;
        let failed_at = *lock(&inner.failed_at);
        let due = pending >= interval && failed_at.is_none_or(|f| pending >= f + interval);
        if pending == 0 || !(force || due) {
            return Ok(());
        }
        if inner.budget.over().await.is_some() {
            // Nothing is marked read: the messages are read after the limit lifts.
            tracing::info!(pending, "auto memory: over a budget limit; no model call");
            return Ok(());
        }
        let messages = store.messages_after(after, MAX_MESSAGES).await?;
        let Some(newest) = messages.last() else {
            return Ok(());
        };
        let (upto, day) = (newest.id, self.local_date(newest.created_at));
        let Some(transcript) = transcript::transcript(&messages, &inner.redactor) else {
            return store.set_setting(AFTER_KEY, &upto.to_string()).await;
        };
        tracing::info!(
            messages = messages.len(),
            user_turns = pending,
            force,
            "auto memory: reading new messages"
        );
        match self.extract(client, &transcript.text).await {
            Ok(extraction) => {
                let (added, refreshed) = self.apply(&day, &extraction, &transcript).await?;
                store.set_setting(AFTER_KEY, &upto.to_string()).await?;
                *lock(&inner.failed_at) = None;
                tracing::info!(added, refreshed, date = %day, "auto memory: note and memories updated");
                self.record(Outcome::Ok, added, refreshed).await?;
                inner.after_run.notify_one();
                Ok(())
            }
            Err(ExtractError::Malformed(e)) => {
                tracing::warn!(error = %e, messages = messages.len(),
                    "auto memory: the answer was malformed twice; these messages are skipped");
                store.set_setting(AFTER_KEY, &upto.to_string()).await?;
                self.record(Outcome::Malformed, 0, 0).await
            }
            Err(ExtractError::Llm(e)) => {
                let e = e.redacted(&inner.redactor);
                tracing::warn!(error = %e, "auto memory: the extraction call failed; nothing changed");
                *lock(&inner.failed_at) = Some(pending);
                self.record(Outcome::Failed, 0, 0).await
            }
        }
    }

    /// The extraction of `text`; a malformed answer is asked for once more.
    async fn extract(&self, client: &TitlesClient, text: &str) -> Result<Extraction, ExtractError> {
        let timeout = self.inner.config.timeout;
        let mut attempt = 1;
        loop {
            let answer = client
                .complete(
                    Purpose::Memory,
                    extract::SYSTEM,
                    extract::prompt(text),
                    timeout,
                )
                .await?;
            match extract::parse(&answer) {
                Ok(e) => return Ok(e),
                Err(e) if attempt == 1 => {
                    tracing::warn!(error = %e, "auto memory: the answer is malformed; asking once more");
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Appends the note of `day` and remembers the important items; (added, refreshed).
    async fn apply(
        &self,
        day: &str,
        extraction: &Extraction,
        transcript: &transcript::Transcript,
    ) -> Result<(u32, u32), StoreError> {
        let inner = &self.inner;
        if extraction.is_empty() {
            return Ok((0, 0));
        }
        let time = Utc::now()
            .with_timezone(&inner.tz)
            .format("%H:%M")
            .to_string();
        let section = note::section(&time, extraction, inner.locale);
        inner.store.append_daily_note(day, &section).await?;
        let (mut added, mut refreshed) = (0, 0);
        for item in extraction
            .memorable()
            .filter(|i| i.importance >= inner.config.min_importance)
        {
            let origin = origin::origin(item, transcript);
            let remembered =
                remember::remember(&inner.memories, &inner.store, item, origin.as_deref()).await;
            match remembered {
                Ok(Remembered::Added(_)) => added += 1,
                Ok(Remembered::Refreshed(_)) => refreshed += 1,
                Err(e) => tracing::warn!(error = %e, "auto memory: cannot remember an item"),
            }
        }
        if let Err(e) = remember::cap(&inner.memories, &inner.store, inner.config.max_auto).await {
            tracing::warn!(error = %e, "auto memory: cannot apply the cap");
        }
        Ok((added, refreshed))
    }

    async fn record(&self, outcome: Outcome, added: u32, refreshed: u32) -> Result<(), StoreError> {
        let run = LastRun {
            at: Utc::now(),
            added,
            refreshed,
            outcome,
        };
        *lock(&self.inner.last) = Some(run);
        let json = serde_json::to_string(&run).unwrap_or_default();
        self.inner.store.set_setting(LAST_RUN_KEY, &json).await
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long from `now` until just after the next local midnight in `tz`.
fn until_midnight(now: DateTime<Utc>, tz: Tz) -> Duration {
    let next = now
        .with_timezone(&tz)
        .date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 30))
        .and_then(|t| tz.from_local_datetime(&t).earliest());
    next.and_then(|n| (n.with_timezone(&Utc) - now).to_std().ok())
        .unwrap_or(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midnight_is_local() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 2, 11, 15, 0, 0).unwrap(); // 23:00 in Shanghai
        assert_eq!(until_midnight(now, tz), Duration::from_secs(3600 + 30));
        let now = Utc.with_ymd_and_hms(2026, 2, 11, 16, 0, 0).unwrap(); // 00:00 next day
        assert_eq!(until_midnight(now, tz), Duration::from_secs(24 * 3600 + 30));
    }
}
