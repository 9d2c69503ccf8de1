//! `Quiet`: what the daemon does once it has nothing to do. A completed round pokes it; after
//! [`TRIM_AFTER`] without another poke it hands the heap's free pages back to the OS
//! (`kernel_common::heap::trim`), and after [`RELEASE_AFTER`] it runs the release callback the
//! composition root gave it (which drops the word-segmentation dictionary if nothing used it
//! meanwhile; it is rebuilt on next use), then trims again. An owner talks in bursts; between
//! them the daemon should shrink to its idle size, and never grow with the number of turns
//! served.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Quiet time after the last round before free heap pages are returned.
pub const TRIM_AFTER: Duration = Duration::from_secs(5);
/// Quiet time after the last round before the segmenter may be dropped.
pub const RELEASE_AFTER: Duration = Duration::from_secs(600);

/// The handle; cloning is cheap.
#[derive(Clone, Debug, Default)]
pub struct Quiet {
    poked: Arc<Notify>,
}

impl Quiet {
    /// Starts the task on `tasks`; `release` runs after [`RELEASE_AFTER`] of quiet. The task
    /// stops when `token` is cancelled.
    pub fn start(
        tasks: &TaskTracker,
        token: CancellationToken,
        release: impl Fn() + Send + 'static,
    ) -> Quiet {
        let quiet = Quiet::default();
        tasks.spawn(run(quiet.poked.clone(), token, release));
        quiet
    }

    /// Something happened (a round completed); returns at once.
    pub fn poke(&self) {
        self.poked.notify_one();
    }
}

async fn run(poked: Arc<Notify>, token: CancellationToken, release: impl Fn()) {
    loop {
        tokio::select! {
            () = poked.notified() => {}
            () = token.cancelled() => return,
        }
        // Activity: wait for TRIM_AFTER of quiet, then for the rest of RELEASE_AFTER.
        let mut released = false;
        let mut trimmed = false;
        while !released {
            let wait = if trimmed {
                RELEASE_AFTER.saturating_sub(TRIM_AFTER)
            } else {
                TRIM_AFTER
            };
            tokio::select! {
                () = poked.notified() => {
                    trimmed = false;
                    continue;
                }
                () = tokio::time::sleep(wait) => {}
                () = token.cancelled() => return,
            }
            if trimmed {
                released = true;
                release();
            }
            trimmed = true;
            let started = std::time::Instant::now();
            if tokio::task::spawn_blocking(kernel_common::heap::trim)
                .await
                .is_ok()
            {
                tracing::debug!(
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "quiet: free heap pages returned"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn release_runs_once_after_the_quiet_period_and_a_poke_restarts_it() {
        let tasks = TaskTracker::new();
        let token = CancellationToken::new();
        let released = Arc::new(AtomicUsize::new(0));
        let counter = released.clone();
        let quiet = Quiet::start(&tasks, token.clone(), move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let count = || released.load(Ordering::SeqCst);
        tokio::time::sleep(RELEASE_AFTER * 2).await;
        assert_eq!(count(), 0, "nothing happened yet, so nothing to release");
        quiet.poke();
        tokio::time::sleep(RELEASE_AFTER / 2).await;
        quiet.poke();
        tokio::time::sleep(RELEASE_AFTER / 2 + Duration::from_secs(1)).await;
        assert_eq!(count(), 0, "a poke restarts the quiet period");
        tokio::time::sleep(RELEASE_AFTER / 2).await;
        assert_eq!(count(), 1);
        tokio::time::sleep(RELEASE_AFTER * 3).await;
        assert_eq!(count(), 1, "once per quiet period");
        token.cancel();
        tasks.close();
        tasks.wait().await;
    }
}
