//! Session titles: generated in the background after the first round with the `[titles]`
//! provider (retries at 0/3/15/60 s on transient errors, gives up at once on 429, only logs a
//! final failure), and on demand by `RetitleSession`. The `[titles]` provider cools down like
//! the chat providers (`models::cooldown`, key `[titles]`): while it does, automatic titling is
//! skipped (the next round after the cooldown titles the session); a success resets it.
//! Every new title is also told to the [`TitledHook`] (the composition root renames the
//! session's Telegram topic through the outbox).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::conversation::{Block, Role};
use crate::error::ApiError;
use crate::llm::LlmError;
use crate::llm::titles::TitlesClient;
use crate::models::Models;
use crate::models::cooldown::{FailoverReason, TITLES};
use crate::refusal::Refusal;
use crate::sessions::{SessionInfo, Sessions};
use crate::store::Store;

/// Delays before each automatic attempt.
pub(crate) const RETRY_SCHEDULE: [Duration; 4] = [
    Duration::ZERO,
    Duration::from_secs(3),
    Duration::from_secs(15),
    Duration::from_secs(60),
];

/// Longest fallback title (characters) when no `[titles]` provider is configured.
const FALLBACK_TITLE_CHARS: usize = 30;

/// Told of each new title (session id, title) once it is stored.
pub(crate) type TitledFn = dyn Fn(i64, String) -> BoxFuture<'static, ()> + Send + Sync;

/// The hook new titles are told to ([`Titler::on_titled`]).
struct TitledHook(Arc<TitledFn>);

impl std::fmt::Debug for TitledHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TitledHook")
    }
}

/// Session titles: the `[titles]` client (if configured) and the background work that uses it.
/// A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Titler {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    sessions: Sessions,
    /// Owns the `[titles]` cooldown.
    models: Models,
    client: Option<Arc<TitlesClient>>,
    /// Background titling is tracked here (shutdown waits for it)…
    tasks: TaskTracker,
    /// …and stops when this is cancelled.
    cancel: CancellationToken,
    /// Over a `[budget]` limit background titling makes no model call.
    budget: crate::budget::Budget,
    /// Told of each new title.
    titled: OnceLock<TitledHook>,
}

impl Titler {
    /// Titles with `client` (none: the first line of the first message); background work is
    /// spawned on `tasks` and stops when `cancel` is cancelled.
    pub fn new(
        store: Store,
        sessions: Sessions,
        models: Models,
        client: Option<TitlesClient>,
        tasks: TaskTracker,
        cancel: CancellationToken,
        budget: crate::budget::Budget,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                sessions,
                models,
                client: client.map(Arc::new),
                tasks,
                cancel,
                budget,
                titled: OnceLock::new(),
            }),
        }
    }

    /// Has `hook` told of every title stored from now on (set once, at start-up).
    pub(crate) fn on_titled(&self, hook: Arc<TitledFn>) {
        if self.inner.titled.set(TitledHook(hook)).is_err() {
            tracing::warn!("the titles hook was set twice; the first one stays");
        }
    }

    /// Stores `title` for `session_id` and tells the hook.
    async fn store_title(&self, session_id: i64, title: &str) -> Result<(), ApiError> {
        self.store()
            .set_session_title(session_id, title)
            .await
            .map_err(ApiError::internal)?;
        if let Some(hook) = self.inner.titled.get() {
            (hook.0)(session_id, title.to_owned()).await;
        }
        Ok(())
    }

    fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Called after each completed round: titles an untitled session in the background, never
    /// delaying or breaking the chat.
    pub fn after_round(&self, session_id: i64) {
        let titler = self.clone();
        self.inner.tasks.spawn(async move {
            let cancel = titler.inner.cancel.clone();
            tokio::select! {
                () = titler.auto_title(session_id) => {}
                () = cancel.cancelled() => {}
            }
        });
    }

    async fn auto_title(&self, session_id: i64) {
        match self.store().get_session(session_id).await {
            Ok(Some(row)) if row.title.is_none() => {}
            Ok(_) => return,
            Err(e) => {
                return tracing::warn!(session = session_id, error = %e, "cannot load session for titling");
            }
        }
        if self.inner.client.is_none() {
            if let Err(e) = self.fallback_title(session_id).await {
                tracing::warn!(session = session_id, error = %e, "cannot store a fallback title");
            }
            return;
        }
        if self.inner.budget.over().await.is_some() {
            return tracing::info!(
                session = session_id,
                "over a budget limit: no titling call (the session is titled after a later round)"
            );
        }
        let cooldowns = self.inner.models.cooldowns();
        if let Some(cooldown) = cooldowns.active(TITLES) {
            return tracing::info!(session = session_id, until = %cooldown.until.to_rfc3339(),
                "the titles provider is cooling down; titling after it");
        }
        let outcome = retry_on_schedule(&RETRY_SCHEDULE, || self.generate_title(session_id)).await;
        self.record(&outcome).await;
        match outcome {
            Ok(title) => tracing::info!(session = session_id, %title, "session titled"),
            Err(e) => tracing::warn!(session = session_id, error = %e, "title generation failed"),
        }
    }

    /// Regenerates the title of `#n` now; without a number, of the session of Telegram topic
    /// `thread_id` (the command was sent there), else of the current session.
    pub async fn retitle(
        &self,
        number: Option<u32>,
        thread_id: Option<i64>,
    ) -> Result<SessionInfo, ApiError> {
        let sessions = &self.inner.sessions;
        let row = match (number, thread_id) {
            (None, Some(thread)) => {
                let (topic, _) = sessions.for_topic(thread, None).await?;
                sessions
                    .by_id(topic.id)
                    .await?
                    .ok_or(Refusal::SessionDeletedMeanwhile)?
            }
            _ => sessions.by_number(number).await?,
        };
        if self.inner.client.is_none() {
            return Err(Refusal::TitlesNotConfigured.into());
        }
        let outcome = self.generate_title(row.id).await;
        self.record(&outcome).await;
        match outcome {
            Ok(_) => {}
            Err(TitleError::Empty) => {
                return Err(Refusal::NothingToTitle.into());
            }
            Err(TitleError::Llm(e)) => {
                return Err(Refusal::TitleFailed {
                    detail: e.to_string(),
                }
                .into());
            }
            Err(TitleError::Api(e)) => return Err(e),
        }
        let row = self
            .store()
            .get_session(row.id)
            .await
            .map_err(ApiError::internal)?
            .ok_or(Refusal::SessionDeletedMeanwhile)?;
        Ok(self.inner.sessions.info_for(&row))
    }

    /// Feeds a title call's outcome to the `[titles]` cooldown.
    async fn record<T>(&self, outcome: &Result<T, TitleError>) {
        let cooldowns = self.inner.models.cooldowns();
        match outcome {
            Ok(_) => cooldowns.succeeded(TITLES).await,
            Err(TitleError::Llm(e)) if FailoverReason::of(e).is_some() => {
                cooldowns.failed(TITLES).await;
            }
            Err(_) => {}
        }
    }

    async fn first_exchange(&self, session_id: i64) -> Result<Option<(String, String)>, ApiError> {
        let messages = self
            .store()
            .load_messages(session_id)
            .await
            .map_err(ApiError::internal)?;
        let text_of = |role: Role| {
            messages
                .iter()
                .map(|m| &m.message)
                .filter(|m| m.role == role)
                .find_map(|m| {
                    let t: String = m
                        .content
                        .iter()
                        .filter_map(|b| {
                            if let Block::Text { text } = b {
                                Some(text.as_str())
                            } else {
                                None
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    (!t.trim().is_empty()).then_some(t)
                })
        };
        Ok(text_of(Role::User).zip(text_of(Role::Assistant)))
    }

    async fn generate_title(&self, session_id: i64) -> Result<String, TitleError> {
        let client = self.inner.client.clone().ok_or(TitleError::Empty)?;
        let (user, answer) = self
            .first_exchange(session_id)
            .await?
            .ok_or(TitleError::Empty)?;
        let title = client.title(&user, &answer).await?;
        self.store_title(session_id, &title).await?;
        Ok(title)
    }

    async fn fallback_title(&self, session_id: i64) -> Result<(), ApiError> {
        let Some((user, _)) = self.first_exchange(session_id).await? else {
            return Ok(());
        };
        let line = user
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim();
        let title = kernel_common::text::truncate(line, FALLBACK_TITLE_CHARS);
        self.store_title(session_id, &title).await
    }
}

/// Runs `attempt` after each delay of `schedule` until it succeeds, fails for good (429 or a
/// non-transient error), or the schedule runs out; returns the last result.
async fn retry_on_schedule<T, F, Fut>(
    schedule: &[Duration],
    mut attempt: F,
) -> Result<T, TitleError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, TitleError>>,
{
    let mut last = Err(TitleError::Empty);
    for delay in schedule {
        tokio::time::sleep(*delay).await;
        last = attempt().await;
        match &last {
            Err(TitleError::Llm(e)) if e.is_transient() => {
                tracing::debug!(error = %e, "title generation failed; will retry");
            }
            _ => break,
        }
    }
    last
}

#[derive(Debug, thiserror::Error)]
enum TitleError {
    #[error("nothing to title yet")]
    Empty,
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Api(#[from] ApiError),
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::time::Instant;

    use super::*;

    fn transient() -> TitleError {
        TitleError::Llm(LlmError::Overloaded {
            status: 503,
            message: "busy".into(),
        })
    }

    async fn run(
        results: Vec<Result<&'static str, TitleError>>,
    ) -> (Result<&'static str, TitleError>, Vec<u64>) {
        let start = Instant::now();
        let times = Arc::new(Mutex::new(Vec::new()));
        let results = Arc::new(Mutex::new(results.into_iter()));
        let out = retry_on_schedule(&RETRY_SCHEDULE, || {
            times.lock().unwrap().push(start.elapsed().as_secs());
            let next = results
                .lock()
                .unwrap()
                .next()
                .expect("no more scripted results");
            async move { next }
        })
        .await;
        let times = times.lock().unwrap().clone();
        (out, times)
    }

    #[tokio::test(start_paused = true)]
    async fn retries_transient_failures_at_0_3_15_60() {
        let (out, times) = run(vec![
            Err(transient()),
            Err(transient()),
            Err(transient()),
            Ok("标题"),
        ])
        .await;
        assert_eq!(out.unwrap(), "标题");
        assert_eq!(times, vec![0, 3, 18, 78]);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_the_schedule() {
        let (out, times) = run(vec![
            Err(transient()),
            Err(transient()),
            Err(transient()),
            Err(transient()),
        ])
        .await;
        assert!(matches!(
            out,
            Err(TitleError::Llm(LlmError::Overloaded { .. }))
        ));
        assert_eq!(times.len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_at_once_on_429_and_on_permanent_errors() {
        let limited = TitleError::Llm(LlmError::RateLimited {
            retry_after: None,
            message: "slow down".into(),
        });
        let (out, times) = run(vec![Err(limited)]).await;
        assert!(matches!(
            out,
            Err(TitleError::Llm(LlmError::RateLimited { .. }))
        ));
        assert_eq!(times, vec![0]);
        let auth = TitleError::Llm(LlmError::Authentication {
            status: 401,
            message: "bad key".into(),
        });
        let (out, times) = run(vec![Err(transient()), Err(auth)]).await;
        assert!(matches!(
            out,
            Err(TitleError::Llm(LlmError::Authentication { .. }))
        ));
        assert_eq!(times, vec![0, 3]);
    }
}
