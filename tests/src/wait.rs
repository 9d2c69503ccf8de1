//! Waiting for a condition another task or process brings about: [`eventually`] polls a probe
//! on a short interval until it is ready or a deadline passes (then panics, saying what it
//! waited for); [`poll`] is the same without the panic.
//!
//! Prefer a signal (a `Notify`, a channel, a stream event) when the code under test offers one;
//! this is for state that can only be observed from outside: files, processes, `GetStatus`.
//! Time is tokio's, so a test with paused time advances through the waits.

use std::fmt::Display;
use std::time::Duration;

use tokio::time::Instant;

/// How often a probe is asked again.
pub const INTERVAL: Duration = Duration::from_millis(20);

/// What a probe answers: `bool` (ready when `true`) or `Option<T>` (ready with `T` when `Some`).
pub trait Outcome {
    /// What a ready probe yields.
    type Value;
    /// `Some` when ready.
    fn ready(self) -> Option<Self::Value>;
}

impl Outcome for bool {
    type Value = ();

    fn ready(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Outcome for Option<T> {
    type Value = T;

    fn ready(self) -> Option<T> {
        self
    }
}

/// Asks `probe` every [`INTERVAL`] until it is ready and returns its value; panics with
/// "timed out after {deadline} waiting for {what}" when `deadline` passes first. The probe is
/// asked once more at the deadline, so a slow probe never loses its last chance.
///
/// E.g. `eventually("the old files to be swept", DEADLINE, async || !old.exists()).await`, or
/// `let title = eventually("a title", DEADLINE, async || title(&mut client).await).await`.
pub async fn eventually<R: Outcome>(
    what: impl Display,
    deadline: Duration,
    probe: impl AsyncFnMut() -> R,
) -> R::Value {
    match poll(deadline, probe).await {
        Some(value) => value,
        None => panic!("timed out after {deadline:?} waiting for {what}"),
    }
}

/// Like [`eventually`], but `None` instead of a panic when `deadline` passes first (for
/// callers that report the failure with more context, or that wait for something optional).
pub async fn poll<R: Outcome>(
    deadline: Duration,
    mut probe: impl AsyncFnMut() -> R,
) -> Option<R::Value> {
    let until = Instant::now() + deadline;
    loop {
        if let Some(value) = probe().await.ready() {
            return Some(value);
        }
        if Instant::now() >= until {
            return None;
        }
        tokio::time::sleep(INTERVAL.min(until.saturating_duration_since(Instant::now()))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_ready_probe_returns_its_value_after_as_many_polls_as_needed() {
        let mut asked = 0;
        let value = eventually("the third ask", Duration::from_secs(1), async || {
            asked += 1;
            (asked == 3).then_some(asked * 10)
        })
        .await;
        assert_eq!((value, asked), (30, 3));
    }

    #[tokio::test(start_paused = true)]
    async fn poll_gives_up_at_the_deadline_after_a_last_ask() {
        let start = Instant::now();
        let mut asked = 0;
        let found = poll(Duration::from_millis(100), async || {
            asked += 1;
            false
        })
        .await;
        assert_eq!(found, None);
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        // Asked at 0, 20, …, 100 ms.
        assert_eq!(asked, 6);
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "timed out after 50ms waiting for the impossible")]
    async fn eventually_panics_saying_what_it_waited_for() {
        eventually("the impossible", Duration::from_millis(50), async || false).await;
    }
}
