//! `Extensions`: the pluggable parts of the turn loop (tools, memory recall) handed to an agent
//! as it starts, through a task-local set by [`provide`] — the seam for embedding and for tests
//! that need their own tools or memories without changing `run`'s signature.

use std::future::Future;
use std::sync::Arc;

use crate::context::MemoryRecall;
use crate::tools::ToolRegistry;

/// What an agent started inside [`provide`] uses instead of its defaults.
#[derive(Debug, Clone, Default)]
pub struct Extensions {
    /// The tool registry (shared with the caller: tools registered later are offered too).
    pub tools: ToolRegistry,
    /// Long-term memory recall; `None` keeps the default (the agent's long-term memory).
    pub recall: Option<Arc<dyn MemoryRecall>>,
}

tokio::task_local! {
    static PROVIDED: Extensions;
}

/// Runs `fut` (e.g. `kernel_agentd::run(..)`) so that an agent started inside it uses `ext`.
pub async fn provide<F: Future>(ext: Extensions, fut: F) -> F::Output {
    PROVIDED.scope(ext, fut).await
}

/// The extensions [`provide`]d to the current task, or the defaults.
pub(crate) fn for_start() -> Extensions {
    PROVIDED.try_with(Clone::clone).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn provide_reaches_code_running_inside_only() {
        let ext = Extensions::default();
        ext.tools.register(Arc::new(Dummy)).unwrap();
        let seen = provide(ext, async { for_start().tools.names() }).await;
        assert_eq!(seen, vec!["dummy"]);
        assert!(for_start().tools.names().is_empty());
    }

    #[derive(Debug)]
    struct Dummy;

    #[async_trait::async_trait]
    impl crate::tools::Tool for Dummy {
        fn name(&self) -> &str {
            "dummy"
        }
        fn description(&self) -> &str {
            "does nothing"
        }
        fn input_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        async fn call(
            &self,
            _: serde_json::Value,
            _: crate::tools::ToolContext,
        ) -> crate::tools::ToolOutput {
            crate::tools::ToolOutput::ok("")
        }
    }
}
