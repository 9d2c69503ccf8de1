//! The hand-over task: turns reach agentd one after another, in the order the owner sent them.
//! While agentd is away a turn is kept (in memory; Telegram still holds its updates) and tried
//! again with backoff; turns queued behind it in the same chat or topic join it (one late
//! turn), those of other topics are handed over after it, each on its own. Only after
//! `telegram.intake_wait_secs` is the owner told it was not taken. Its updates are confirmed
//! once it is handled. An edit of a message held here replaces its text before the next try
//! ([`Held`]); one that came during the try that was taken reaches agentd as an edit.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Confirm, Held, Settings};
use crate::bundle::Bundle;
use crate::handle::App;
use crate::turn::{self, Outcome, Ready};

/// Turns waiting for their predecessor to reach agentd.
const TURN_QUEUE: usize = 32;
/// First pause before trying agentd again.
const FIRST_RETRY: Duration = Duration::from_millis(250);
/// Longest pause between two tries.
const MAX_RETRY: Duration = Duration::from_secs(5);

/// Starts the task; send it turns. It ends when the sender is dropped (or at `shutdown`,
/// leaving a turn it is still retrying to Telegram).
pub(super) fn spawn(
    app: App,
    confirm: Arc<Confirm>,
    held: Arc<Held>,
    settings: Settings,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
) -> (mpsc::Sender<Bundle>, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<Bundle>(TURN_QUEUE);
    let handle = tasks.spawn(async move {
        // Turns of other topics that came while one waited for agentd: they go next, each on
        // its own (never joined to a turn of another topic).
        let mut later = VecDeque::new();
        loop {
            // A turn put aside waited for agentd too.
            let (mut bundle, waited) = match later.pop_front() {
                Some(bundle) => (bundle, true),
                None => match rx.recv().await {
                    Some(bundle) => (bundle, false),
                    None => break,
                },
            };
            let mut ids = message_ids(&bundle);
            bundle.bound(app.texts());
            // Everything about a topic's turn is said in that topic.
            let app = app.in_topic(bundle.thread());
            let ready = turn::prepare(&app, bundle).await;
            let handing = Handing {
                app: &app,
                held: &held,
                settings,
                shutdown: &shutdown,
            };
            let mut queued = Queued {
                rx: &mut rx,
                later: &mut later,
            };
            let handled = handing.deliver(ready, &mut ids, &mut queued, waited).await;
            let late_edits = held.release(&ids);
            let Some(updates) = handled else {
                return;
            };
            confirm.handled(&updates);
            for (message, text) in late_edits {
                // Edited while agentd took the old text: it reaches the turn as an edit.
                crate::edits::forward(&app, teloxide::types::MessageId(message), text).await;
            }
        }
    });
    (tx, handle)
}

/// Turns queued behind the one being handed over: the channel, and those of other topics put
/// aside for after it.
struct Queued<'a> {
    rx: &'a mut mpsc::Receiver<Bundle>,
    later: &'a mut VecDeque<Bundle>,
}

fn message_ids(bundle: &Bundle) -> Vec<i32> {
    bundle.parts.iter().map(|p| p.message_id).collect()
}

/// What handing one turn over needs.
struct Handing<'a> {
    app: &'a App,
    held: &'a Held,
    settings: Settings,
    shutdown: &'a CancellationToken,
}

impl Handing<'_> {
    /// Hands `ready` (messages `ids`; `late`: it waited for agentd already) over until it is
    /// handled; returns its updates, or `None` at shutdown.
    async fn deliver(
        &self,
        mut ready: Ready,
        ids: &mut Vec<i32>,
        queued: &mut Queued<'_>,
        mut late: bool,
    ) -> Option<Vec<i32>> {
        let (app, settings) = (self.app, self.settings);
        let since = Instant::now();
        let mut pause = FIRST_RETRY;
        loop {
            for (message, text) in self.held.take_edits(ids) {
                tracing::info!(
                    message,
                    "a held message was edited: the turn takes the new text"
                );
                ready.replace_text(message, &text);
            }
            match turn::hand_over(app, &ready, late).await {
                Outcome::Done => return Some(ready.updates().to_vec()),
                Outcome::Taken(keys) => {
                    // Some messages are an earlier turn's; the rest still goes.
                    ready.drop_taken(&keys);
                    continue;
                }
                Outcome::Unreachable => {}
            }
            if since.elapsed() >= settings.intake_wait {
                tracing::warn!(
                    waited_secs = since.elapsed().as_secs(),
                    "kernel-agentd did not come back; the owner is told the message was not taken"
                );
                ready.give_up(app, settings.intake_wait.as_secs()).await;
                return Some(ready.updates().to_vec());
            }
            tracing::info!(
                retry_in_ms = pause.as_millis() as u64,
                "kernel-agentd unreachable; the turn waits"
            );
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = self.shutdown.cancelled() => return None,
            }
            pause = (pause * 2).min(MAX_RETRY);
            late = true;
            // What the owner sent meanwhile in the same chat or topic joins this turn; what
            // came in another topic waits for a hand-over of its own after this one (one turn
            // per topic, joined like this one).
            while let Ok(mut more) = queued.rx.try_recv() {
                if more.thread() != ready.thread() {
                    match queued
                        .later
                        .iter_mut()
                        .find(|b| b.thread() == more.thread())
                    {
                        Some(waiting) => waiting.absorb(more),
                        None => queued.later.push_back(more),
                    }
                    continue;
                }
                ids.extend(message_ids(&more));
                more.bound(app.texts());
                let more = turn::prepare(app, more).await;
                ready.absorb(app, more).await;
            }
        }
    }
}
