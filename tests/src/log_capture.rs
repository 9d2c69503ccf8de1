//! `LogCapture`: keeps every `tracing` event and span emitted on any thread as text while it is
//! alive, so a test can assert that a line was logged and that no secret reaches a log line —
//! including lines from sqlx's worker, `spawn_blocking` and other runtime threads.
//!
//! One process-wide subscriber ([`Global`]) is installed the first time a capture starts; it
//! hands each line to every live capture. Tests run in parallel in one process, so a capture
//! also holds other tests' lines: a superset, which is what "no secret in any line" wants, and a
//! test looking for its own line still finds it. While no capture is alive nothing is formatted.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Every log line (target + all fields, `Debug`-formatted) recorded while installed, with its
/// level.
#[derive(Clone, Default)]
pub struct LogCapture {
    lines: Lines,
}

/// Keeps its [`LogCapture`] recording; dropping it stops the recording (the lines stay).
#[must_use = "the capture stops when the guard is dropped"]
pub struct CaptureGuard {
    id: u64,
}

impl LogCapture {
    /// Captures all levels, on every thread, until the guard is dropped.
    pub fn install() -> (LogCapture, CaptureGuard) {
        assert!(
            *INSTALLED.get_or_init(|| tracing::subscriber::set_global_default(Global).is_ok()),
            "LogCapture needs the process's global tracing subscriber, but another one was set"
        );
        let capture = LogCapture::default();
        let id = NEXT_SINK.fetch_add(1, Ordering::Relaxed);
        let mut sinks = lock(&SINKS);
        sinks.push((id, capture.lines.clone()));
        LIVE.store(sinks.len(), Ordering::SeqCst);
        (capture, CaptureGuard { id })
    }

    /// The lines captured so far.
    pub fn lines(&self) -> Vec<String> {
        lock(&self.lines)
            .iter()
            .map(|(_, line)| line.clone())
            .collect()
    }

    /// The lines captured so far at `level`.
    pub fn lines_at(&self, level: Level) -> Vec<String> {
        lock(&self.lines)
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, line)| line.clone())
            .collect()
    }
}

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        let mut sinks = lock(&SINKS);
        sinks.retain(|(id, _)| *id != self.id);
        LIVE.store(sinks.len(), Ordering::SeqCst);
    }
}

/// Whether [`Global`] became the global subscriber (decided once per process).
static INSTALLED: OnceLock<bool> = OnceLock::new();
/// One capture's lines.
type Lines = Arc<Mutex<Vec<(Level, String)>>>;

/// The live captures' line buffers, by guard id.
static SINKS: Mutex<Vec<(u64, Lines)>> = Mutex::new(Vec::new());
/// `SINKS.len()`, read without the lock on every event.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static NEXT_SINK: AtomicU64 = AtomicU64::new(1);
static NEXT_SPAN: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Formats a line and appends it to every live capture.
fn push(level: Level, target: &str, visit: impl FnOnce(&mut Line)) {
    let mut line = Line(target.to_owned());
    visit(&mut line);
    // Clone the buffers out so no capture's lock is taken under the registry's.
    let sinks: Vec<_> = lock(&SINKS).iter().map(|(_, s)| s.clone()).collect();
    for sink in sinks {
        lock(&sink).push((level, line.0.clone()));
    }
}

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

/// The process-wide subscriber behind every [`LogCapture`]. Every callsite's interest stays
/// "sometimes", so `enabled` is asked per event: all levels while a capture is alive, nothing
/// otherwise (tracing caches interest per callsite process-wide, so "never" would silence a
/// callsite for captures that start later).
struct Global;

impl Subscriber for Global {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        LIVE.load(Ordering::SeqCst) > 0
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let meta = span.metadata();
        push(*meta.level(), meta.target(), |l| span.record(l));
        Id::from_u64(NEXT_SPAN.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        push(Level::TRACE, "record", |l| values.record(l));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        push(*meta.level(), meta.target(), |l| event.record(l));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
