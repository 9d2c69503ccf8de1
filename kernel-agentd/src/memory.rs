//! Long-term memory: [`Memories`] adds, lists, searches and deletes memories and recalls them
//! for each turn; the `memory_*` tools, the memory RPCs (`#n` listings) and recall all use it.
//!
//! Search: the query is segmented like the indexed text (jieba search mode); FTS5 ranks by BM25
//! with the terms ANDed, then ORed when AND finds nothing; when FTS5 is unavailable, fails or
//! finds nothing, LIKE substring matching takes over (all terms, then any). Every term is a
//! quoted string token, so no user text is ever FTS5 query syntax, and nothing a user types
//! makes a search fail.

mod browse;
mod dot;
mod edit;
pub mod embeddings;
pub mod exact;
pub mod fusion;
pub mod hybrid;
mod listing;
mod recall;
pub mod segment;
pub mod semantic;
mod tools;
pub mod vectors;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::error::ApiError;
use crate::listing::Listing;
use crate::refusal::{Listed, Refusal};
use crate::store::memory::LikeMatch;
use crate::store::{Store, StoreError};
use segment::Combine;

pub use crate::store::memory::MemoryRow;
pub use listing::{LISTING_LIMIT, MemoryInfo, MemoryPage, PAGE_SIZE};
pub use tools::{TOOL_NAMES, register_tools};

/// Longest memory text, in characters.
pub const MAX_TEXT_CHARS: usize = 10_000;
/// Search results when no limit is given.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
/// Most search results.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Most memories `memory_list` returns (also its default).
pub const MAX_LIST_LIMIT: usize = 200;

/// How a search ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// The FTS5 index (BM25 order).
    Fts5,
    /// LIKE substring matching (FTS5 unavailable or it found nothing).
    Like,
    /// Lexical and vector matches fused (`memory::hybrid`).
    Hybrid,
}

impl SearchMode {
    /// `"fts5"` or `"like"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Fts5 => "fts5",
            SearchMode::Like => "like",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

/// A search's results, best first, and how it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub memories: Vec<MemoryRow>,
    pub mode: SearchMode,
}

/// Why a memory operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("the memory text is empty")]
    Empty,
    #[error("the memory text is too long ({chars} characters; at most {MAX_TEXT_CHARS})")]
    TooLong { chars: usize },
    #[error("the search query is empty")]
    EmptyQuery,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Store(e) => ApiError::internal(e),
            MemoryError::Empty => Refusal::MemoryEmpty.into(),
            MemoryError::TooLong { chars } => Refusal::MemoryTooLong {
                chars,
                max: MAX_TEXT_CHARS,
            }
            .into(),
            MemoryError::EmptyQuery => Refusal::QueryEmpty.into(),
        }
    }
}

/// The long-term memory store of one agent.
#[derive(Debug)]
pub struct Memories {
    store: Store,
    /// Whether searches use the FTS5 index (FTS5 available and the index ready).
    fts: bool,
    tz: Tz,
    /// The latest `#n` listing.
    listing: Listing,
    /// Recall by meaning, when `[embeddings]` is configured (`memory::hybrid`).
    semantic: std::sync::OnceLock<semantic::Semantic>,
}

impl Memories {
    /// Memories in `store`, with times shown in `tz`. When the store has FTS5, creates the index
    /// and indexes memories it lacks; if that fails, search uses LIKE. (The segmenter's dictionary
    /// is static data in the binary: nothing to load.)
    pub async fn open(store: Store, tz: Tz) -> Memories {
        let fts = store.fts5_available() && prepare_index(&store).await;
        tracing::info!(
            search = if fts { "fts5" } else { "like" },
            "long-term memory ready"
        );
        Memories {
            store,
            fts,
            tz,
            listing: Listing::new(Listed::Memories),
            semantic: std::sync::OnceLock::new(),
        }
    }

    /// How searches run: `Fts5` when the index is in use.
    pub fn mode(&self) -> SearchMode {
        if self.fts {
            SearchMode::Fts5
        } else {
            SearchMode::Like
        }
    }

    /// Remembers `text` (trimmed; 1..=[`MAX_TEXT_CHARS`] characters). A text already
    /// remembered is not stored twice: its existing memory is returned.
    pub async fn add(&self, text: &str) -> Result<MemoryRow, MemoryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(MemoryError::Empty);
        }
        let chars = text.chars().count();
        if chars > MAX_TEXT_CHARS {
            return Err(MemoryError::TooLong { chars });
        }
        if let Some(existing) = self.store.find_memory(text).await? {
            tracing::info!(memory = existing.id, "memory already stored");
            return Ok(existing);
        }
        let terms = self.fts.then(|| segment::index_terms(text));
        let row = self.store.add_memory(text, terms.as_deref()).await?;
        tracing::info!(memory = row.id, chars, "memory added");
        if let Some(semantic) = self.semantic.get() {
            semantic.wake();
        }
        Ok(row)
    }

    /// Up to `limit` (clamped to 1..=[`MAX_SEARCH_LIMIT`]) memories matching `query`, best first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Found, MemoryError> {
        if query.trim().is_empty() {
            return Err(MemoryError::EmptyQuery);
        }
        self.find_hybrid(
            query,
            limit.clamp(1, MAX_SEARCH_LIMIT),
            hybrid::DateRange::default(),
            hybrid::SEARCH_EMBED_BUDGET,
        )
        .await
    }

    /// The lexical search behind [`Memories::search`] and recall (`limit` ≥ 1, not clamped),
    /// and whether its hits contain every query term (ANDed FTS5 or all-terms LIKE).
    async fn find_lexical(&self, query: &str, limit: usize) -> Result<(Found, bool), MemoryError> {
        let terms = segment::query_terms(query);
        if self.fts
            && !terms.is_empty()
            && let Some((memories, how)) = self.find_fts(&terms, limit).await
        {
            return Ok((
                Found {
                    memories,
                    mode: SearchMode::Fts5,
                },
                how == Combine::And,
            ));
        }
        let terms = if terms.is_empty() {
            vec![kernel_common::text::head(query.trim(), segment::MAX_QUERY_CHARS).to_owned()]
        } else {
            terms
        };
        let mut memories = self
            .store
            .search_memories_like(&terms, LikeMatch::All, limit)
            .await?;
        let mut strong = true;
        if memories.is_empty() && terms.len() > 1 {
            strong = false;
            memories = self
                .store
                .search_memories_like(&terms, LikeMatch::Any, limit)
                .await?;
        }
        Ok((
            Found {
                memories,
                mode: SearchMode::Like,
            },
            strong,
        ))
    }

    /// FTS5 with the terms ANDed, then ORed; `None` when neither finds anything (or FTS5 fails,
    /// which is logged: the caller falls back to LIKE).
    async fn find_fts(&self, terms: &[String], limit: usize) -> Option<(Vec<MemoryRow>, Combine)> {
        let mut ways = vec![Combine::And];
        if terms.len() > 1 {
            ways.push(Combine::Or);
        }
        for how in ways {
            let expr = segment::match_expr(terms, how);
            match self.store.search_memories_fts(&expr, limit).await {
                Ok(found) if !found.is_empty() => return Some((found, how)),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "full-text search failed; using LIKE");
                    return None;
                }
            }
        }
        None
    }

    /// Up to `limit` (clamped to 1..=[`MAX_LIST_LIMIT`]) memories, newest first.
    pub async fn list(&self, limit: usize) -> Result<Vec<MemoryRow>, MemoryError> {
        Ok(self
            .store
            .recent_memories(limit.clamp(1, MAX_LIST_LIMIT))
            .await?)
    }

    /// How many memories there are.
    pub async fn count(&self) -> Result<u64, MemoryError> {
        Ok(self.store.count_memories().await?)
    }

    /// Deletes the memories `ids` (with their index entries, in one transaction); how many
    /// existed.
    pub async fn delete(&self, ids: &[i64]) -> Result<u64, MemoryError> {
        let deleted = self.store.delete_memories(ids, self.fts).await?;
        if let Some(semantic) = self.semantic.get() {
            semantic.forget(ids);
        }
        tracing::info!(requested = ids.len(), deleted, "memories deleted");
        Ok(deleted)
    }

    /// `time` in the configured time zone, RFC 3339 (`2026-02-11T21:42:00+08:00`).
    pub fn local_time(&self, time: DateTime<Utc>) -> String {
        time.with_timezone(&self.tz)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    /// `time`'s date (`YYYY-MM-DD`) in the configured time zone.
    pub fn local_date(&self, time: DateTime<Utc>) -> String {
        time.with_timezone(&self.tz).format("%Y-%m-%d").to_string()
    }
}

/// Creates the FTS5 index and indexes the memories it lacks; whether the index can be used.
async fn prepare_index(store: &Store) -> bool {
    let result = async {
        let missing = store.prepare_memory_index(segment::SEGMENTER).await?;
        if missing.is_empty() {
            return Ok(0);
        }
        let entries = tokio::task::spawn_blocking(move || {
            missing
                .into_iter()
                .map(|(id, text)| (id, segment::index_terms(&text)))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("segmenting memories failed: {e}")))?;
        store.index_memories(&entries).await?;
        Ok::<_, StoreError>(entries.len())
    }
    .await;
    match result {
        Ok(0) => true,
        Ok(indexed) => {
            tracing::info!(indexed, "indexed memories missing from the full-text index");
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "the full-text index cannot be prepared; memory search uses LIKE");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::memory::LikeMatch;

    #[tokio::test]
    async fn every_read_carries_the_origin() {
        let env = crate::test_support::env("").await;
        let store = &env.store;
        // Opening memory builds the FTS5 index.
        super::Memories::open(store.clone(), chrono_tz::Tz::UTC).await;
        let row = store
            .add_auto_memory("项目代号是蓝鲸", Some("项目 代号 蓝鲸"), 4, Some("tool t"))
            .await
            .unwrap();
        let want = Some("tool t".to_owned());
        assert_eq!(row.origin, want);
        let terms = ["蓝鲸".to_owned(), "不存在".to_owned()];
        let reads = [
            store.recent_memories(5).await.unwrap(),
            store.memories_page(0, 5).await.unwrap(),
            store.memories_by_id(&[row.id]).await.unwrap(),
            store.search_memories_fts("\"蓝鲸\"", 5).await.unwrap(),
            store
                .search_memories_like(&terms[..1], LikeMatch::All, 5)
                .await
                .unwrap(),
            store
                .search_memories_like(&terms, LikeMatch::Any, 5)
                .await
                .unwrap(),
        ];
        for (i, rows) in reads.iter().enumerate() {
            assert_eq!(rows.len(), 1, "read {i}");
            assert_eq!(rows[0].origin, want, "read {i}");
        }
    }
}
