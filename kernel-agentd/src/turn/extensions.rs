//! `Extensions`: the pluggable parts of the turn loop (tools, memory recall), handed to
//! `Agent::start` by `server::run_with` — the seam for embedding and for tests that need their own
//! tools or memories.

use std::sync::Arc;

use super::recall::MemoryRecall;
use crate::tools::ToolRegistry;

/// What an agent uses instead of its defaults.
#[derive(Debug, Clone, Default)]
pub struct Extensions {
    /// The tool registry (shared with the caller: tools registered later are offered too).
    pub tools: ToolRegistry,
    /// Long-term memory recall; `None` keeps the default (the agent's long-term memory).
    pub recall: Option<Arc<dyn MemoryRecall>>,
}
