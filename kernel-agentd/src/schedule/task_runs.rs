//! The runner of scheduled tasks: one tracked task under the root token, started with the
//! scheduler, that runs the pending task runs (`store::task_runs`) oldest first, one at a time.
//!
//! A fired task's run is stored in the transaction that moves its schedule on, and leaves the
//! store only once its turn has ended with an outcome the owner gets (`Completed` or `Failed`:
//! both committed to the outbox before the last event) or the owner cancelled it. A run cut off
//! by a shutdown — before its turn started (`run_for_kernel` gave `None`, e.g. while the owner's
//! turn held the gate) or mid-turn (the root token cancelled) — stays, and the runner finds it
//! at the next start: it runs with its stored prompt (its due time in it). Deleting its schedule
//! drops it, also while it waits for the gate (checked once the gate is free, before the turn
//! starts; a turn already started runs to its end).
//!
//! The guarantee is at-least-once: a crash after the outcome is committed to the outbox and
//! before the row is deleted runs the task again at the next start (a small window). A turn
//! cut off by shutdown has queued its "cancelled" notice, so the owner may see that, then the
//! answer of the run after the restart. A run whose turn cannot start (`Err`: bad input, should
//! not happen) or vanishes without an outcome is dropped with a WARN, so it cannot loop.

use tracing::Instrument as _;

use super::{RETRY, Schedules};
use crate::store::task_runs::TaskRun;
use crate::turn::{TurnEvent, TurnEvents};

/// How a run's turn ended, as far as its row is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// The owner gets its outcome, or cancelled it: the row goes.
    Done,
    /// Cut off by shutdown: the row stays for the next start.
    Interrupted,
    /// The turn did not start, or ended with no outcome while agentd kept running: the row goes
    /// (with a WARN) so it cannot loop.
    Dropped,
}

impl Schedules {
    /// Starts the task runner (a tracked task until the root token is cancelled).
    pub(super) fn start_task_runs(&self) {
        let this = self.clone();
        self.inner.tasks.spawn(
            this.run_tasks()
                .instrument(tracing::info_span!("task_runs")),
        );
    }

    /// Runs pending task runs, oldest first, until shutdown; waits for the next one to be queued.
    async fn run_tasks(self) {
        let inner = &self.inner;
        loop {
            let queued = inner.run_queued.notified();
            tokio::pin!(queued);
            queued.as_mut().enable();
            if inner.root.is_cancelled() {
                return;
            }
            match inner.store.next_task_run().await {
                Ok(Some(run)) => {
                    let span = tracing::info_span!(
                        "scheduled_task",
                        run = run.id,
                        schedule = ?run.schedule_id
                    );
                    let ended = self.run_task(&run).instrument(span.clone()).await;
                    if ended == Ended::Interrupted {
                        return;
                    }
                    if !self.forget(run.id).instrument(span).await {
                        return;
                    }
                }
                Ok(None) => {
                    tokio::select! {
                        () = inner.root.cancelled() => return,
                        () = &mut queued => {}
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "the task runner cannot read the pending runs");
                    if !self.pause().await {
                        return;
                    }
                }
            }
        }
    }

    /// Runs `run`'s turn (unless its schedule was deleted while it waited for the gate) and
    /// follows it to its last event.
    async fn run_task(&self, run: &TaskRun) -> Ended {
        let inner = &self.inner;
        if let Some(id) = run.schedule_id {
            match inner.store.schedule(id).await {
                Ok(Some(watch)) if watch.mode == super::Mode::Watch.as_str() => {
                    return self.run_watch(run, &watch).await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "cannot read a task run's schedule; it runs later");
                    return if self.pause().await {
                        Ended::Dropped
                    } else {
                        Ended::Interrupted
                    };
                }
            }
        }
        let budget = inner.turns.budget();
        if let Some((_, over)) = budget.over().await {
            // Over a budget limit: no model call; the owner hears of it once per task and day.
            tracing::info!("scheduled task skipped: a budget limit is reached");
            let task = run
                .schedule_id
                .map_or(format!("run:{}", run.id), |id| format!("schedule:{id}"));
            if budget.first_skip(&task).await {
                let what: String = run
                    .prompt
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(80)
                    .collect();
                let item = crate::outbox::NewItem {
                    turn_id: String::new(),
                    body: crate::outbox::ItemBody::Notice {
                        text: crate::budget::texts::task_skipped(inner.locale, &what, &over),
                    },
                    reply_to: None,
                    placeholder: None,
                    thread_id: match run.session_id {
                        Some(session) => inner.outbox.session_topic(session).await.unwrap_or(None),
                        None => None,
                    },
                    outside: false,
                };
                if let Err(e) = inner.outbox.queue(item).await {
                    tracing::warn!(error = %e, "cannot tell the owner of a skipped task");
                }
            }
            return Ended::Done;
        }
        tracing::info!("scheduled task waits for its turn");
        let store = inner.store.clone();
        let id = run.id;
        let wanted = async move {
            store.task_run_pending(id).await.unwrap_or_else(|e| {
                tracing::error!(error = %e, "cannot check a task run; it runs");
                true
            })
        };
        match inner
            .turns
            .run_for_kernel_if(
                run.prompt.clone(),
                run.model.as_deref(),
                wanted,
                run.session_id,
            )
            .await
        {
            Ok(Some(events)) => {
                tracing::info!("scheduled turn started");
                let ended = self.follow(events).await;
                match ended {
                    Ended::Done => tracing::info!("scheduled turn ended"),
                    Ended::Interrupted => {
                        tracing::info!(
                            "scheduled turn cut off by shutdown; it runs at the next start"
                        )
                    }
                    Ended::Dropped => {
                        tracing::warn!("scheduled turn ended with no outcome; the run is dropped")
                    }
                }
                ended
            }
            Ok(None) if inner.root.is_cancelled() => {
                tracing::info!("shutdown before the scheduled turn; it runs at the next start");
                Ended::Interrupted
            }
            Ok(None) => {
                tracing::info!("the run was deleted with its schedule while it waited");
                Ended::Done
            }
            Err(e) => {
                tracing::warn!(error = %e, "the scheduled turn did not start; the run is dropped");
                Ended::Dropped
            }
        }
    }

    /// Drains `events` to the turn's last one.
    async fn follow(&self, mut events: TurnEvents) -> Ended {
        let root = &self.inner.root;
        while let Some(event) = events.recv().await {
            match event {
                TurnEvent::Completed { .. } | TurnEvent::Failed { .. } => return Ended::Done,
                TurnEvent::Cancelled if root.is_cancelled() => return Ended::Interrupted,
                TurnEvent::Cancelled => return Ended::Done,
                _ => {}
            }
        }
        if root.is_cancelled() {
            Ended::Interrupted
        } else {
            Ended::Dropped
        }
    }

    /// Deletes the run `id`, retrying after store errors; `false` when shutdown came first (the
    /// run then stays, and runs again at the next start).
    async fn forget(&self, id: i64) -> bool {
        loop {
            match self.inner.store.delete_task_run(id).await {
                Ok(_) => return true,
                Err(e) => {
                    tracing::error!(error = %e, "cannot delete an ended task run; retrying");
                    if !self.pause().await {
                        return false;
                    }
                }
            }
        }
    }

    /// Waits [`RETRY`]; `false` when shutdown came first.
    pub(super) async fn pause(&self) -> bool {
        tokio::select! {
            () = self.inner.root.cancelled() => false,
            () = tokio::time::sleep(RETRY) => true,
        }
    }
}
