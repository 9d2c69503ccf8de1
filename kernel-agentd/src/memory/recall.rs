//! Recall's query over long-term memory: the top-k memories matching the owner's message (hybrid
//! when `[embeddings]` is configured, the query's vector waited for at most `recall_budget_ms`,
//! else lexical for that turn), or the k most recent when none match (the turn's `turn::recall` formats them). Recall never fails a
//! turn: a failing search is logged and recalls what it can.

use super::{Memories, MemoryRow};

impl Memories {
    /// Up to `k` memories for a turn whose user text is `query`: the best matches, else the
    /// most recent ones.
    pub async fn recall_rows(&self, query: &str, k: usize) -> Vec<MemoryRow> {
        if k == 0 {
            return Vec::new();
        }
        if !query.trim().is_empty() {
            let budget = self
                .semantic
                .get()
                .map_or(super::hybrid::SEARCH_EMBED_BUDGET, |s| s.recall_budget());
            let found = self
                .find_hybrid(query, k, super::hybrid::DateRange::default(), budget)
                .await;
            match found {
                Ok(found) if !found.memories.is_empty() => return found.memories,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "memory recall search failed"),
            }
        }
        self.store.recent_memories(k).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "memory recall failed");
            Vec::new()
        })
    }
}
