//! `Quiet`: keeping the daemon at its idle size. A completed round pokes it; after
//! [`TRIM_AFTER`] without another poke it runs the trim callback the composition root gave it
//! (`kernel_common::heap::trim`: free heap pages back to the OS), after closing the idle SQLite
//! connections (the `shed` callback; not on the busy path below). Nothing else is
//! dropped later: the word-segmentation dictionary is static data in the binary
//! (`memory::segment`), not heap to release. While rounds keep coming without such a pause,
//! it still trims at most every [`TRIM_EVERY`], so a busy daemon does not keep the peak of every
//! burst either. An owner talks in bursts; between them the daemon should shrink to its idle
//! size, and never grow with the number of turns served.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Quiet time after the last round before free heap pages are returned.
pub(crate) const TRIM_AFTER: Duration = Duration::from_secs(5);
/// While rounds keep coming, free heap pages are returned at most this often.
pub(crate) const TRIM_EVERY: Duration = Duration::from_secs(60);

/// What `Quiet` runs. `trim` must return quickly (it runs on a blocking thread); `shed` is
/// awaited before every trim.
pub(crate) struct Callbacks {
    pub trim: Box<dyn Fn() + Send + Sync>,
    pub shed: Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
}

/// The handle; cloning is cheap.
#[derive(Clone, Debug, Default)]
pub(crate) struct Quiet {
    poked: Arc<Notify>,
}

impl Quiet {
    /// Starts the task on `tasks`; it stops when `token` is cancelled.
    pub(crate) fn start(
        tasks: &TaskTracker,
        token: CancellationToken,
        callbacks: Callbacks,
    ) -> Quiet {
        let quiet = Quiet::default();
        tasks.spawn(run(quiet.poked.clone(), token, Arc::new(callbacks)));
        quiet
    }

    /// Something happened (a round completed); returns at once.
    pub(crate) fn poke(&self) {
        self.poked.notify_one();
    }
}

/// Runs `which` of `callbacks` on a blocking thread and waits for it.
async fn call(callbacks: &Arc<Callbacks>, which: fn(&Callbacks)) {
    let callbacks = callbacks.clone();
    let started = std::time::Instant::now();
    if tokio::task::spawn_blocking(move || which(&callbacks))
        .await
        .is_ok()
    {
        tracing::debug!(
            elapsed_us = started.elapsed().as_micros() as u64,
            "quiet: housekeeping done"
        );
    }
}

fn trim(c: &Callbacks) {
    (c.trim)();
}

/// Sheds, then trims: what shedding frees is handed back too.
async fn shed_and_trim(callbacks: &Arc<Callbacks>) {
    (callbacks.shed)().await;
    call(callbacks, trim).await;
}

async fn run(poked: Arc<Notify>, token: CancellationToken, callbacks: Arc<Callbacks>) {
    let mut last_trim = Instant::now();
    loop {
        tokio::select! {
            () = poked.notified() => {}
            () = token.cancelled() => return,
        }
        // Activity: wait for TRIM_AFTER of quiet, then shed and trim once.
        loop {
            tokio::select! {
                () = poked.notified() => {
                    if last_trim.elapsed() >= TRIM_EVERY {
                        // Busy: trim only; closing connections now would make the next
                        // rounds open them again.
                        call(&callbacks, trim).await;
                        last_trim = Instant::now();
                    }
                    continue;
                }
                () = tokio::time::sleep(TRIM_AFTER) => {}
                () = token.cancelled() => return,
            }
            shed_and_trim(&callbacks).await;
            last_trim = Instant::now();
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counts {
        trims: Arc<AtomicUsize>,
        sheds: Arc<AtomicUsize>,
    }

    fn start(tasks: &TaskTracker, token: &CancellationToken) -> (Quiet, Counts) {
        let (trims, sheds) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (t, s) = (trims.clone(), sheds.clone());
        let quiet = Quiet::start(
            tasks,
            token.clone(),
            Callbacks {
                trim: Box::new(move || {
                    t.fetch_add(1, Ordering::SeqCst);
                }),
                shed: Box::new(move || {
                    s.fetch_add(1, Ordering::SeqCst);
                    Box::pin(async {})
                }),
            },
        );
        (quiet, Counts { trims, sheds })
    }

    async fn stop(tasks: TaskTracker, token: CancellationToken) {
        token.cancel();
        tasks.close();
        tasks.wait().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_sheds_and_trims_once_and_a_poke_restarts_it() {
        let (tasks, token) = (TaskTracker::new(), CancellationToken::new());
        let (quiet, counts) = start(&tasks, &token);
        let sheds = || counts.sheds.load(Ordering::SeqCst);
        let trims = || counts.trims.load(Ordering::SeqCst);
        tokio::time::sleep(TRIM_AFTER * 10).await;
        assert_eq!((sheds(), trims()), (0, 0), "nothing happened yet");
        quiet.poke();
        tokio::time::sleep(TRIM_AFTER / 2).await;
        quiet.poke();
        tokio::time::sleep(TRIM_AFTER / 2 + Duration::from_millis(500)).await;
        assert_eq!(sheds(), 0, "a poke restarts the quiet period");
        tokio::time::sleep(TRIM_AFTER / 2).await;
        assert_eq!((sheds(), trims()), (1, 1));
        tokio::time::sleep(TRIM_AFTER * 100).await;
        assert_eq!((sheds(), trims()), (1, 1), "once per quiet period");
        stop(tasks, token).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_daemon_is_still_trimmed_every_minute_and_a_pause_trims_once() {
        let (tasks, token) = (TaskTracker::new(), CancellationToken::new());
        let (quiet, counts) = start(&tasks, &token);
        let trims = || counts.trims.load(Ordering::SeqCst);
        // One round a second for ten minutes: never TRIM_AFTER of quiet.
        let busy = Duration::from_secs(600);
        let rounds = busy.as_secs();
        for _ in 0..rounds {
            quiet.poke();
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let expected = (busy.as_secs() / TRIM_EVERY.as_secs()) as usize;
        assert!(
            (expected - 1..=expected).contains(&trims()),
            "{} trims in {rounds} busy seconds",
            trims()
        );
        let before = trims();
        tokio::time::sleep(TRIM_AFTER + Duration::from_secs(1)).await;
        assert_eq!(trims(), before + 1, "the pause after the burst trims");
        assert_eq!(
            counts.sheds.load(Ordering::SeqCst),
            1,
            "idle connections are shed in the pause, not while busy"
        );
        stop(tasks, token).await;
    }
}
