//! `LogCapture`: a minimal `tracing` subscriber that keeps every event and span as text, so a
//! test can assert that no secret reaches a log line while a provider talks to the fake.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::DefaultGuard;
use tracing::{Event, Metadata, Subscriber};

/// Every log line (target + all fields, `Debug`-formatted) recorded while installed.
#[derive(Clone, Default)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

impl LogCapture {
    /// Captures all levels on this thread until the guard is dropped (a `#[tokio::test]`
    /// runtime runs every task on the test's thread).
    pub fn install() -> (LogCapture, DefaultGuard) {
        let capture = LogCapture::default();
        let guard = tracing::subscriber::set_default(capture.clone());
        (capture, guard)
    }

    /// The lines captured so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    fn push(&self, target: &str, visit: impl FnOnce(&mut Line)) {
        let mut line = Line(target.to_owned());
        visit(&mut line);
        self.lines.lock().unwrap().push(line.0);
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
        self.push(span.metadata().target(), |l| span.record(l));
        Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        self.push("record", |l| values.record(l));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        self.push(event.metadata().target(), |l| event.record(l));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
