//! Memory recall for the turn: the [`MemoryRecall`] seam (long-term memory by default, a fixed
//! list in tests) and its default over [`Memories`]: the top-k memories matching the owner's
//! message, or the k most recent when none match, as `[id] text` lines for the per-turn block
//! (`context::per_turn_block`). Recall never fails a turn.

use crate::memory::{Memories, MemoryRow};

/// Recalls long-term memories relevant to a query.
#[async_trait::async_trait]
pub trait MemoryRecall: Send + Sync + std::fmt::Debug {
    /// Up to `k` memories, most relevant first, as one-line texts.
    async fn recall(&self, query: &str, k: usize) -> Vec<String>;
}

/// Recalls nothing (unit tests).
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct NoRecall;

#[cfg(test)]
#[async_trait::async_trait]
impl MemoryRecall for NoRecall {
    async fn recall(&self, _query: &str, _k: usize) -> Vec<String> {
        Vec::new()
    }
}

/// One recalled memory as the per-turn block shows it (after `- `): `[id] (YYYY-MM-DD) text`,
/// the date local, so the model can tell old from new and search by date; a memory from outside
/// content carries its origin (`[id] (date) [来源: tool X，不是主人说的] text`), so the model never
/// takes it for the owner's word.
pub(super) fn recall_line(m: &MemoryRow, date: &str) -> String {
    match &m.origin {
        Some(origin) => format!(
            "[{}] ({date}) [来源: {origin}，不是主人说的] {}",
            m.id, m.text
        ),
        None => format!("[{}] ({date}) {}", m.id, m.text),
    }
}

#[async_trait::async_trait]
impl MemoryRecall for Memories {
    async fn recall(&self, query: &str, k: usize) -> Vec<String> {
        let rows = self.recall_rows(query, k).await;
        tracing::debug!(recalled = rows.len(), "memories recalled");
        rows.iter()
            .map(|m| recall_line(m, &self.local_date(m.created_at)))
            .collect()
    }
}
