//! The hand-over task: turns reach agentd one after another, in the order the owner sent them.
//! While agentd is away a turn is kept (in memory; Telegram still holds its updates) and tried
//! again with backoff; turns queued behind it join it (one late turn). Only after
//! `telegram.intake_wait_secs` is the owner told it was not taken. Its updates are confirmed
//! once it is handled.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Confirm, Settings};
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
    settings: Settings,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
) -> (mpsc::Sender<Bundle>, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<Bundle>(TURN_QUEUE);
    let handle = tasks.spawn(async move {
        while let Some(mut bundle) = rx.recv().await {
            bundle.bound(app.texts());
            // Everything about a topic's turn is said in that topic.
            let app = app.in_topic(bundle.thread());
            let ready = turn::prepare(&app, bundle).await;
            match deliver(&app, ready, &mut rx, settings, &shutdown).await {
                Some(updates) => confirm.handled(&updates),
                None => return,
            }
        }
    });
    (tx, handle)
}

/// Hands `ready` over until it is handled; returns its updates, or `None` at shutdown.
async fn deliver(
    app: &App,
    mut ready: Ready,
    queued: &mut mpsc::Receiver<Bundle>,
    settings: Settings,
    shutdown: &CancellationToken,
) -> Option<Vec<i32>> {
    let since = Instant::now();
    let mut pause = FIRST_RETRY;
    let mut late = false;
    loop {
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
            () = shutdown.cancelled() => return None,
        }
        pause = (pause * 2).min(MAX_RETRY);
        late = true;
        // What the owner sent meanwhile joins this turn.
        while let Ok(mut more) = queued.try_recv() {
            more.bound(app.texts());
            let more = turn::prepare(app, more).await;
            ready.absorb(app, more).await;
        }
    }
}
