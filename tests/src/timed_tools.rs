//! A tool that takes a set time, read-only or not, and logs when each call ran: for the
//! parallel tool-call tests and benchmark.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kernel_agentd::tools::{Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};

/// When one call ran: tool name, start, end.
pub type Runs = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

/// `name`: waits `delay` (or until cancelled) and answers `done: <name>`.
#[derive(Debug)]
pub struct Timed {
    pub name: &'static str,
    pub read_only: bool,
    pub delay: Duration,
    pub runs: Runs,
}

impl Timed {
    pub fn new(name: &'static str, read_only: bool, delay: Duration, runs: &Runs) -> Arc<Self> {
        Arc::new(Self {
            name,
            read_only,
            delay,
            runs: runs.clone(),
        })
    }
}

#[async_trait::async_trait]
impl Tool for Timed {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Takes a set time."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    async fn call(&self, _input: Value, ctx: ToolContext) -> ToolOutput {
        let start = Instant::now();
        let out = tokio::select! {
            () = ctx.cancel.cancelled() => ToolOutput::error("stopped"),
            () = tokio::time::sleep(self.delay) => ToolOutput::ok(format!("done: {}", self.name)),
        };
        self.runs
            .lock()
            .unwrap()
            .push((self.name.to_owned(), start, Instant::now()));
        out
    }
}
