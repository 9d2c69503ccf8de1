//! Long-term memories: the `memories` table (original text) and its FTS5 index `memories_fts`
//! (segmented text, rowid = memory id), changed together in one transaction; BM25 and LIKE
//! queries.
//!
//! The store does not segment text: callers (the `memory` module) pass the segmented terms and the
//! FTS5 query. Whether the index is used is the caller's choice per call (`indexed`), so a store
//! whose FTS5 is reported unavailable never touches `memories_fts`; [`Store::prepare_memory_index`]
//! repairs the index when FTS5 is back.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use super::settings::put_setting;
use super::{Store, StoreError, from_millis, like_escape, now_millis};

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRow {
    pub id: i64,
    /// The text as given.
    pub text: String,
    pub created_at: DateTime<Utc>,
    /// Added by the auto-memory job (`source = 'auto'`), not by the owner.
    pub auto: bool,
    /// Where an automatic memory's content came from when not from the owner (`tool <name>`);
    /// `None`: the owner.
    pub origin: Option<String>,
}

/// How a LIKE search combines its terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LikeMatch {
    /// Rows containing every term, newest first.
    All,
    /// Rows containing any term, those with more terms first, then newest first.
    Any,
}

/// A `memories` row as SQLite has it.
#[derive(FromRow)]
struct RawMemory {
    id: i64,
    text: String,
    created_at: i64,
    auto: bool,
    origin: Option<String>,
}

impl TryFrom<RawMemory> for MemoryRow {
    type Error = StoreError;

    fn try_from(r: RawMemory) -> Result<Self, StoreError> {
        Ok(MemoryRow {
            id: r.id,
            created_at: from_millis(r.created_at, || format!("memory {}", r.id))?,
            text: r.text,
            auto: r.auto,
            origin: r.origin,
        })
    }
}

fn rows(raws: Vec<RawMemory>) -> Result<Vec<MemoryRow>, StoreError> {
    raws.into_iter().map(MemoryRow::try_from).collect()
}

/// The `settings` key naming the segmenter the index was built with.
const INDEX_SEGMENTER_KEY: &str = "memory_index.segmenter";

fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl Store {
    /// This store with FTS5 reported unavailable (memory search falls back to LIKE) — for tests
    /// of the fallback, and for callers that must not touch the index.
    #[cfg(any(test, feature = "test-support"))]
    pub fn without_fts5(mut self) -> Store {
        self.fts5 = false;
        self
    }

    /// Creates the FTS5 index if it is missing, empties it when it was built by another
    /// segmenter than `segmenter` (its terms would not match the queries'), and drops entries of
    /// deleted memories. Returns the memories the index lacks (`(id, text)`), for the caller to
    /// segment and [`index_memories`](Store::index_memories). Needs FTS5.
    pub async fn prepare_memory_index(
        &self,
        segmenter: &str,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let op = "prepare the memory index";
        sqlx::query("CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(terms)")
            .execute(&self.pool)
            .await
            .map_err(StoreError::db(op))?;
        self.reset_index_for(segmenter).await?;
        let pruned =
            sqlx::query("DELETE FROM memories_fts WHERE rowid NOT IN (SELECT id FROM memories)")
                .execute(&self.pool)
                .await
                .map_err(StoreError::db(op))?
                .rows_affected();
        if pruned > 0 {
            tracing::info!(pruned, "dropped index entries of deleted memories");
        }
        sqlx::query_as(
            "SELECT id, text FROM memories WHERE id NOT IN (SELECT rowid FROM memories_fts)
             ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(op))
    }

    /// Empties the index and records `segmenter` (one transaction) unless the index was built
    /// by it. A crash before re-indexing is harmless: the next start finds the memories missing.
    async fn reset_index_for(&self, segmenter: &str) -> Result<(), StoreError> {
        let op = "reset the memory index";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let built_by: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = ?1")
                .bind(INDEX_SEGMENTER_KEY)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        if built_by.as_deref() == Some(segmenter) {
            return Ok(());
        }
        let dropped = sqlx::query("DELETE FROM memories_fts")
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?
            .rows_affected();
        put_setting(&mut *tx, INDEX_SEGMENTER_KEY, segmenter)
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        if dropped > 0 {
            tracing::info!(
                dropped,
                from = built_by.as_deref().unwrap_or("an earlier segmenter"),
                to = segmenter,
                "the memory index is rebuilt for a new segmenter"
            );
        }
        Ok(())
    }

    /// Adds index entries `(id, segmented terms)` in one transaction. Needs FTS5.
    pub async fn index_memories(&self, entries: &[(i64, String)]) -> Result<(), StoreError> {
        let op = "index memories";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        for (id, terms) in entries {
            sqlx::query("INSERT INTO memories_fts (rowid, terms) VALUES (?1, ?2)")
                .bind(id)
                .bind(terms)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        }
        tx.commit().await.map_err(StoreError::db(op))
    }

    /// Stores a memory and, when `terms` is given, its index entry, in one transaction.
    pub async fn add_memory(
        &self,
        text: &str,
        terms: Option<&str>,
    ) -> Result<MemoryRow, StoreError> {
        let op = "add a memory";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let raw: RawMemory = sqlx::query_as(
            "INSERT INTO memories (text, created_at) VALUES (?1, ?2)
             RETURNING id, text, created_at, source = 'auto' AS auto, origin",
        )
        .bind(text)
        .bind(now_millis())
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        if let Some(terms) = terms {
            sqlx::query("INSERT INTO memories_fts (rowid, terms) VALUES (?1, ?2)")
                .bind(raw.id)
                .bind(terms)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        tracing::debug!(memory = raw.id, indexed = terms.is_some(), "memory added");
        raw.try_into()
    }

    /// The oldest memory whose text is exactly `text`, if any.
    pub async fn find_memory(&self, text: &str) -> Result<Option<MemoryRow>, StoreError> {
        let raw: Option<RawMemory> = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto' AS auto, origin FROM memories
             WHERE text = ?1 ORDER BY id LIMIT 1",
        )
        .bind(text)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("find a memory"))?;
        raw.map(MemoryRow::try_from).transpose()
    }

    /// Deletes the memories `ids` (missing ones are skipped) and, when `indexed`, their index
    /// entries, in one transaction. Returns how many memories were deleted.
    pub async fn delete_memories(&self, ids: &[i64], indexed: bool) -> Result<u64, StoreError> {
        let op = "delete memories";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let mut deleted = 0;
        for &id in ids {
            if indexed {
                sqlx::query("DELETE FROM memories_fts WHERE rowid = ?1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::db(op))?;
            }
            let done = sqlx::query("DELETE FROM memories WHERE id = ?1")
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            deleted += done.rows_affected();
            // A memory consolidation set aside (listed on request) is forgotten the same way.
            let aside = sqlx::query("DELETE FROM memories_set_aside WHERE id = ?1")
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            deleted += aside.rows_affected();
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        tracing::debug!(requested = ids.len(), deleted, indexed, "memories deleted");
        Ok(deleted)
    }

    /// Up to `limit` memories, newest first.
    pub async fn recent_memories(&self, limit: usize) -> Result<Vec<MemoryRow>, StoreError> {
        let raws = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto' AS auto, origin FROM memories
                 ORDER BY id DESC LIMIT ?1",
        )
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list memories"))?;
        rows(raws)
    }

    /// Up to `limit` memories newest first, skipping the `offset` newest (a page of `/memory`).
    pub async fn memories_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<MemoryRow>, StoreError> {
        let raws = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto' AS auto, origin FROM memories
                 ORDER BY id DESC LIMIT ?1 OFFSET ?2",
        )
        .bind(sql_limit(limit))
        .bind(sql_limit(offset))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list a page of memories"))?;
        rows(raws)
    }

    /// How many memories there are.
    pub async fn count_memories(&self) -> Result<u64, StoreError> {
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM memories")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("count memories"))?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// Up to `limit` memories matching the FTS5 query `expr`, best BM25 score first (ties:
    /// newest first). Needs FTS5; `expr` must be built from quoted strings only.
    pub async fn search_memories_fts(
        &self,
        expr: &str,
        limit: usize,
    ) -> Result<Vec<MemoryRow>, StoreError> {
        let raws = sqlx::query_as(
            // Ranked inside the index first, so only the `limit` best rows are joined with
            // their text (ranking every match joined with its text costs twice as much).
            "SELECT m.id, m.text, m.created_at, m.source = 'auto' AS auto, m.origin
             FROM (SELECT rowid AS id, bm25(memories_fts) AS score
                   FROM memories_fts
                   WHERE memories_fts MATCH ?1
                   ORDER BY score, rowid DESC
                   LIMIT ?2) AS best
             JOIN memories AS m ON m.id = best.id
             ORDER BY best.score, m.id DESC",
        )
        .bind(expr)
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("search memories"))?;
        rows(raws)
    }

    /// Up to `limit` memories whose text contains the `terms` (literally: `%`, `_` and `\` have
    /// no special meaning; ASCII letters match case-insensitively). No terms, no rows.
    pub async fn search_memories_like(
        &self,
        terms: &[String],
        how: LikeMatch,
        limit: usize,
    ) -> Result<Vec<MemoryRow>, StoreError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let patterns: Vec<String> = terms.iter().map(|t| like_escape(t)).collect();
        let patterns = serde_json::Value::from(patterns).to_string();
        let sql = match how {
            LikeMatch::All => {
                "SELECT id, text, created_at, source = 'auto' AS auto, origin FROM memories AS m
                 WHERE NOT EXISTS (
                     SELECT 1 FROM json_each(?1) AS t
                     WHERE m.text NOT LIKE '%' || t.value || '%' ESCAPE '\\')
                 ORDER BY id DESC LIMIT ?2"
            }
            LikeMatch::Any => {
                "SELECT id, text, created_at, auto, origin FROM (
                     SELECT m.id, m.text, m.created_at, m.source = 'auto' AS auto, m.origin,
                            (SELECT COUNT(*) FROM json_each(?1) AS t
                             WHERE m.text LIKE '%' || t.value || '%' ESCAPE '\\') AS hits
                     FROM memories AS m)
                 WHERE hits > 0
                 ORDER BY hits DESC, id DESC LIMIT ?2"
            }
        };
        let raws = sqlx::query_as(sql)
            .bind(patterns)
            .bind(sql_limit(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("search memories"))?;
        rows(raws)
    }

    /// The memory ids present in the FTS5 index, ascending (for checks). Needs FTS5.
    #[cfg(any(test, feature = "test-support"))]
    pub async fn memory_index_ids(&self) -> Result<Vec<i64>, StoreError> {
        sqlx::query_scalar("SELECT rowid FROM memories_fts ORDER BY rowid")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("read the memory index"))
    }
}

#[cfg(test)]
mod tests {
    use crate::store::like_escape;

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(like_escape(r"50%_a\b"), r"50\%\_a\\b");
        assert_eq!(like_escape("天气"), "天气");
    }
}
