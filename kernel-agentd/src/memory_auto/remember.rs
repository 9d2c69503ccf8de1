//! Turning extracted items into long-term memories: full-text candidates first, then a
//! normalised CJK-aware similarity (`similar`); a near-duplicate (an owner's memory included)
//! is refreshed instead of added. Then the cap on automatic memories.

use super::extract::Item;
use super::similar;
use crate::memory::{Memories, MemoryError, SearchMode, segment};
use crate::store::Store;

/// Candidates compared with each item.
const CANDIDATES: usize = 10;

/// What happened to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Remembered {
    /// A new automatic memory.
    Added(i64),
    /// An existing memory said the same; it was refreshed.
    Refreshed(i64),
}

/// Adds `item` as an automatic memory (from `origin` when not from the owner) unless a memory
/// already says the same.
pub(super) async fn remember(
    memories: &Memories,
    store: &Store,
    item: &Item,
    origin: Option<&str>,
) -> Result<Remembered, MemoryError> {
    let text = item.text.trim();
    let found = memories.search(text, CANDIDATES).await?;
    if let Some(same) = found.memories.iter().find(|m| similar::same(&m.text, text)) {
        store.refresh_memory(same.id, item.importance).await?;
        tracing::debug!(
            memory = same.id,
            "auto memory: a near-duplicate was refreshed"
        );
        return Ok(Remembered::Refreshed(same.id));
    }
    let terms = (memories.mode() == SearchMode::Fts5).then(|| segment::index_terms(text));
    let row = store
        .add_auto_memory(text, terms.as_deref(), item.importance, origin)
        .await?;
    Ok(Remembered::Added(row.id))
}

/// Deletes the automatic memories beyond `max` (least important, longest unconfirmed first);
/// how many went.
pub(super) async fn cap(
    memories: &Memories,
    store: &Store,
    max: usize,
) -> Result<u64, MemoryError> {
    let over = store.auto_memories_over(max).await?;
    if over.is_empty() {
        return Ok(0);
    }
    let deleted = memories.delete(&over).await?;
    tracing::info!(
        deleted,
        max,
        "auto memory: over the cap; the least important were dropped"
    );
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, importance: u8) -> Item {
        Item {
            text: text.into(),
            importance,
            source: None,
        }
    }

    #[tokio::test]
    async fn near_duplicates_refresh_and_the_cap_drops_the_least_important_oldest() {
        let env = crate::test_support::env("").await;
        let memories = Memories::open(env.store.clone(), chrono_tz::Tz::UTC).await;
        let owner = memories.add("主人喜欢喝乌龙茶").await.unwrap();
        let r = remember(
            &memories,
            &env.store,
            &item("主人很喜欢喝乌龙茶。", 4),
            None,
        )
        .await
        .unwrap();
        assert_eq!(r, Remembered::Refreshed(owner.id));
        let Remembered::Added(low) =
            remember(&memories, &env.store, &item("主人周三去健身房", 3), None)
                .await
                .unwrap()
        else {
            panic!("a new fact is added");
        };
        let Remembered::Added(high) =
            remember(&memories, &env.store, &item("主人对花生过敏", 5), None)
                .await
                .unwrap()
        else {
            panic!("a new fact is added");
        };
        let Remembered::Added(newer_low) =
            remember(&memories, &env.store, &item("主人的猫叫米索", 3), None)
                .await
                .unwrap()
        else {
            panic!("a new fact is added");
        };
        assert_eq!(
            remember(&memories, &env.store, &item("主人对花生过敏！", 3), None)
                .await
                .unwrap(),
            Remembered::Refreshed(high)
        );
        assert_eq!(memories.count().await.unwrap(), 4);
        assert_eq!(cap(&memories, &env.store, 2).await.unwrap(), 1);
        let left: Vec<i64> = memories
            .list(10)
            .await
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect();
        assert!(!left.contains(&low), "{left:?}");
        assert!(left.contains(&high) && left.contains(&newer_low) && left.contains(&owner.id));
        let rows = memories.list(10).await.unwrap();
        assert!(rows.iter().any(|m| m.id == owner.id && !m.auto));
        assert!(rows.iter().any(|m| m.id == high && m.auto));
    }
}
