//! Tools and a memory recall for turn-loop tests: an echo, a fixed-output tool, a tool that runs
//! until cancelled, and fixed memories.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kernel_agentd::tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use kernel_agentd::turn::Extensions;
use kernel_agentd::turn::MemoryRecall;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// `echo {"text": …}` → `echo: …`; counts its calls.
#[derive(Debug, Default)]
pub struct Echo {
    pub calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes the text back."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    async fn call(&self, input: Value, _ctx: ToolContext) -> ToolOutput {
        self.calls.fetch_add(1, Ordering::SeqCst);
        ToolOutput::ok(format!(
            "echo: {}",
            input["text"].as_str().unwrap_or_default()
        ))
    }
}

/// A tool named `name` that always answers `content` (for slimming tests).
#[derive(Debug)]
pub struct Fixed {
    pub name: &'static str,
    pub content: String,
}

#[async_trait::async_trait]
impl Tool for Fixed {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Answers a fixed text."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    async fn call(&self, _input: Value, _ctx: ToolContext) -> ToolOutput {
        ToolOutput::ok(self.content.clone())
    }
}

/// `slow`: runs until its cancellation token fires (or 5 minutes pass); records that it saw the
/// cancellation.
#[derive(Debug, Default)]
pub struct Slow {
    pub started: Notify,
    pub saw_cancel: AtomicBool,
}

#[async_trait::async_trait]
impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Takes a long time."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _input: Value, ctx: ToolContext) -> ToolOutput {
        self.started.notify_one();
        tokio::select! {
            () = ctx.cancel.cancelled() => {
                self.saw_cancel.store(true, Ordering::SeqCst);
                ToolOutput::error("stopped")
            }
            () = tokio::time::sleep(Duration::from_secs(300)) => ToolOutput::ok("finished"),
        }
    }
}

/// Recalls the same memories for every query.
#[derive(Debug, Clone)]
pub struct FixedMemories(pub Vec<String>);

#[async_trait::async_trait]
impl MemoryRecall for FixedMemories {
    async fn recall(&self, _query: &str, k: usize) -> Vec<String> {
        self.0.iter().take(k).cloned().collect()
    }
}

/// Extensions offering `tools`.
pub fn with_tools(tools: Vec<Arc<dyn Tool>>) -> Extensions {
    let registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).expect("register a test tool");
    }
    Extensions {
        tools: registry,
        recall: None,
    }
}
