//! `ToolEvents`: how a running tool tells the caller of the turn something worth showing now
//! (e.g. "a CLI delegation started"), through the turn's own event stream.

use std::sync::Arc;

/// Something a tool reports while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEvent {
    /// A CLI delegation's subprocess started (adapters show "⏳ 正在执行任务…").
    CliStarted {
        /// The configured CLI name, e.g. `claude_code`.
        cli: String,
        /// The subprocess' working directory.
        cwd: String,
    },
    /// `ask_user` put a question to the owner and waits for the answer.
    Question {
        id: String,
        text: String,
        options: Vec<String>,
    },
    /// The question is no longer pending (answered, timed out, cancelled).
    QuestionClosed { id: String },
    /// A risky action waits for the owner's approval (`approvals`).
    ApprovalRequested(ApprovalShown),
    /// The approval is no longer pending; `decision`: allowed, denied, expired or cancelled.
    ApprovalClosed { id: String, decision: String },
}

/// A pending approval as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalShown {
    /// Random, single-use: names the request in `Approvals::decide`.
    pub id: String,
    pub turn_id: String,
    /// The kind of action (the tool's name).
    pub action: String,
    /// What will run, cut to `approvals::MAX_TEXT_CHARS`.
    pub text: String,
    /// The full text's length in characters (more than `text` holds when it was cut).
    pub text_chars: u64,
    /// Seconds until it counts as denied.
    pub timeout_secs: u64,
}

/// Where a tool sends its [`ToolEvent`]s. The default sink drops them (tests, tool calls outside a
/// turn). Cheap to clone.
#[derive(Clone, Default)]
pub struct ToolEvents {
    sink: Option<Arc<dyn Fn(ToolEvent) + Send + Sync>>,
}

impl std::fmt::Debug for ToolEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEvents")
            .field("connected", &self.sink.is_some())
            .finish()
    }
}

impl ToolEvents {
    /// A sink that hands every event to `sink` (it must not block).
    pub fn new(sink: impl Fn(ToolEvent) + Send + Sync + 'static) -> Self {
        Self {
            sink: Some(Arc::new(sink)),
        }
    }

    /// Reports `event` (dropped when nobody listens).
    pub fn emit(&self, event: ToolEvent) {
        if let Some(sink) = &self.sink {
            sink(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn events_reach_the_sink_and_the_default_drops_them() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let events = ToolEvents::new({
            let seen = seen.clone();
            move |e| seen.lock().unwrap().push(e)
        });
        let started = ToolEvent::CliStarted {
            cli: "codex".into(),
            cwd: "/w".into(),
        };
        events.clone().emit(started.clone());
        ToolEvents::default().emit(started.clone());
        assert_eq!(*seen.lock().unwrap(), vec![started]);
    }
}
