//! `LogCapture`: a minimal `tracing` subscriber that keeps every event and span as text, so a
//! test can assert that no secret reaches a log line while a provider talks to the fake.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::{DefaultGuard, Interest};
use tracing::{Event, Level, Metadata, Subscriber};

/// Every log line (target + all fields, `Debug`-formatted) recorded while installed, with its
/// level.
#[derive(Clone, Default)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<(Level, String)>>>,
    next_id: Arc<AtomicU64>,
}

impl LogCapture {
    /// Captures all levels on this thread until the guard is dropped (a `#[tokio::test]`
    /// runtime runs every task on the test's thread).
    pub fn install() -> (LogCapture, DefaultGuard) {
        quiet_global_default();
        let capture = LogCapture::default();
        let guard = tracing::subscriber::set_default(capture.clone());
        (capture, guard)
    }

    /// The lines captured so far.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap();
        lines.iter().map(|(_, line)| line.clone()).collect()
    }

    /// The lines captured so far at `level`.
    pub fn lines_at(&self, level: Level) -> Vec<String> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, line)| line.clone())
            .collect()
    }

    fn push(&self, level: Level, target: &str, visit: impl FnOnce(&mut Line)) {
        let mut line = Line(target.to_owned());
        visit(&mut line);
        self.lines.lock().unwrap().push((level, line.0));
    }
}

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl Subscriber for LogCapture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let meta = span.metadata();
        self.push(*meta.level(), meta.target(), |l| span.record(l));
        Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        self.push(Level::TRACE, "record", |l| values.record(l));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        self.push(*meta.level(), meta.target(), |l| event.record(l));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Installs [`Quiet`] as the process's global subscriber, once. tracing caches each callsite's
/// interest process-wide, computed by the first thread that reaches it: a parallel test thread
/// with no subscriber would cache "never" and silence that callsite for a capturing test too.
/// With a global subscriber that answers "sometimes", every callsite is asked per event and
/// reaches the thread's own [`LogCapture`].
fn quiet_global_default() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another global subscriber (one set by the test itself) serves as well.
        let _ = tracing::subscriber::set_global_default(Quiet);
    });
}

/// Records nothing, but keeps every callsite's interest at "sometimes".
struct Quiet;

impl Subscriber for Quiet {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        false
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
