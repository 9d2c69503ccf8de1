//! The conversation index (issue 48): `history_docs` (one row per indexed message: its session,
//! role, time and searchable text; deleted with its message by `ON DELETE CASCADE`) and the FTS5
//! table `history_fts` (segmented terms, rowid = message id; a trigger drops an entry with its
//! doc), and `history_vectors` with `[embeddings]` (`store::vectors`). All are created at
//! start-up like the memory index, not by a migration; the indexer's
//! progress (`history_index.cursor`, the highest message id looked at) and the segmenter the
//! index was built with live in `settings`.
//!
//! The store does not segment: the `recall` module passes the terms and the FTS5 query (quoted
//! strings only).

use sqlx::{AssertSqlSafe, FromRow};

use super::settings::put_setting;
use super::{Store, StoreError, like_escape};

const CURSOR_KEY: &str = "history_index.cursor";
const SEGMENTER_KEY: &str = "history_index.segmenter";
/// Matches of one full-text query that are scored ([`Store::search_history_fts`]): at most
/// about 3 ms of BM25 at 200k messages.
pub const SCORED_PER_QUERY: usize = 2_000;

/// A stored message as the indexer reads it.
#[derive(Debug, Clone, FromRow)]
pub struct RawHistoryMessage {
    pub id: i64,
    pub session_id: i64,
    pub role: String,
    /// The JSON blocks, as `messages.content`.
    pub content: String,
    pub created_at: i64,
}

/// One entry to index: a message's searchable text and its segmented terms.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    pub message_id: i64,
    pub session_id: i64,
    pub role: String,
    pub created_at: i64,
    pub text: String,
    pub terms: String,
}

/// An indexed message.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct HistoryDoc {
    pub message_id: i64,
    pub session_id: i64,
    pub role: String,
    /// Unix ms.
    pub created_at: i64,
    pub text: String,
}

/// How far the indexer got: messages looked at (up to the cursor) and all messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryProgress {
    pub done: u64,
    pub total: u64,
}

fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl Store {
    /// Creates the index tables (the FTS5 one when `fts`) and empties the index when it was
    /// built by another segmenter than `segmenter` (the indexer then runs over every message
    /// again).
    pub async fn prepare_history_index(
        &self,
        segmenter: &str,
        fts: bool,
    ) -> Result<(), StoreError> {
        let op = "prepare the conversation index";
        let mut statements = vec![
            "CREATE TABLE IF NOT EXISTS history_docs (
                 message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
                 session_id INTEGER NOT NULL,
                 role       TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 text       TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS history_docs_by_time ON history_docs (created_at)",
            "CREATE INDEX IF NOT EXISTS history_docs_by_session
                 ON history_docs (session_id, message_id)",
            // The messages' vectors with `[embeddings]` (`store::vectors`, `Corpus::History`).
            "CREATE TABLE IF NOT EXISTS history_vectors (
                 message_id INTEGER PRIMARY KEY
                     REFERENCES history_docs (message_id) ON DELETE CASCADE,
                 model      TEXT NOT NULL,
                 dim        INTEGER NOT NULL,
                 scale      REAL NOT NULL,
                 vector     BLOB NOT NULL)",
        ];
        if fts {
            statements.extend([
                "CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(terms)",
                "CREATE TRIGGER IF NOT EXISTS history_docs_gone AFTER DELETE ON history_docs
                 BEGIN DELETE FROM history_fts WHERE rowid = OLD.message_id; END",
            ]);
        }
        for sql in statements {
            sqlx::query(sql)
                .execute(&self.pool)
                .await
                .map_err(StoreError::db(op))?;
        }
        let built_by = self.get_history_setting(SEGMENTER_KEY).await?;
        if built_by.as_deref() != Some(segmenter) {
            let mut tx = self
                .pool
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(StoreError::db(op))?;
            sqlx::query("DELETE FROM history_docs")
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            if fts {
                sqlx::query("DELETE FROM history_fts")
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::db(op))?;
            }
            for (key, value) in [(SEGMENTER_KEY, segmenter), (CURSOR_KEY, "0")] {
                put_setting(&mut *tx, key, value)
                    .await
                    .map_err(StoreError::db(op))?;
            }
            tx.commit().await.map_err(StoreError::db(op))?;
        }
        Ok(())
    }

    async fn get_history_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = ?1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("read the conversation index state"))
    }

    /// The highest message id the indexer has looked at.
    pub async fn history_cursor(&self) -> Result<i64, StoreError> {
        Ok(self
            .get_history_setting(CURSOR_KEY)
            .await?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Up to `limit` messages with an id above `after`, by id.
    pub async fn history_messages_after(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<RawHistoryMessage>, StoreError> {
        sqlx::query_as(
            "SELECT id, session_id, role, content, created_at FROM messages
             WHERE id > ?1 ORDER BY id LIMIT ?2",
        )
        .bind(after)
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read messages to index"))
    }

    /// Adds `entries` to the index (the FTS5 table when `fts`) and moves the cursor to `cursor`,
    /// in one transaction. An entry whose message was deleted meanwhile is skipped.
    pub async fn index_history(
        &self,
        entries: &[HistoryEntry],
        cursor: i64,
        fts: bool,
    ) -> Result<(), StoreError> {
        let op = "index messages";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        for e in entries {
            let added = sqlx::query(
                "INSERT OR IGNORE INTO history_docs (message_id, session_id, role, created_at, text)
                 SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?1)",
            )
            .bind(e.message_id)
            .bind(e.session_id)
            .bind(&e.role)
            .bind(e.created_at)
            .bind(&e.text)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?
            .rows_affected();
            if fts && added > 0 {
                sqlx::query("INSERT INTO history_fts (rowid, terms) VALUES (?1, ?2)")
                    .bind(e.message_id)
                    .bind(&e.terms)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::db(op))?;
            }
        }
        put_setting(&mut *tx, CURSOR_KEY, &cursor.to_string())
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))
    }

    /// Messages the indexer has looked at, and all messages.
    pub async fn history_progress(&self) -> Result<HistoryProgress, StoreError> {
        let cursor = self.history_cursor().await?;
        let (done, total): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM messages WHERE id <= ?1), (SELECT COUNT(*) FROM messages)",
        )
        .bind(cursor)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("count indexed messages"))?;
        Ok(HistoryProgress {
            done: u64::try_from(done).unwrap_or(0),
            total: u64::try_from(total).unwrap_or(0),
        })
    }

    /// Up to `limit` indexed messages matching any of the FTS5 queries `exprs` (quoted strings
    /// only), created in `[from, to)` unix ms, each with its score (lower is better), best first
    /// (ties: newest first). A message's score is the sum of its BM25 scores for the queries it
    /// matches: BM25 is a sum over the query's terms, so one query per term ranks like one OR
    /// query. Each query scores only its newest [`SCORED_PER_QUERY`] matches: an FTS5 ranking
    /// scores every match (a word said in half of 200k messages took 100+ ms), and for
    /// conversation recall the newest of so many is the better half. A query with fewer
    /// matches (any rare word) is ranked whole.
    pub async fn search_history_fts(
        &self,
        exprs: &[String],
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<(HistoryDoc, f64)>, StoreError> {
        #[derive(FromRow)]
        struct Row {
            #[sqlx(flatten)]
            doc: HistoryDoc,
            score: f64,
        }
        if exprs.is_empty() {
            return Ok(Vec::new());
        }
        let open = from == i64::MIN && to == i64::MAX;
        // ?1 from, ?2 to, ?3 the cap, ?4 the limit, ?5… the queries.
        let one = |n: usize| {
            if open {
                format!(
                    "SELECT * FROM (SELECT rowid AS id, bm25(history_fts) AS score FROM history_fts
                     WHERE history_fts MATCH ?{n} ORDER BY rowid DESC LIMIT ?3)"
                )
            } else {
                format!(
                    "SELECT * FROM (SELECT f.rowid AS id, bm25(history_fts) AS score
                     FROM history_fts AS f JOIN history_docs AS r ON r.message_id = f.rowid
                     WHERE history_fts MATCH ?{n} AND ?1 <= r.created_at AND r.created_at < ?2
                     ORDER BY f.rowid DESC LIMIT ?3)"
                )
            }
        };
        let scored: Vec<String> = (0..exprs.len()).map(|i| one(i + 5)).collect();
        let sql = format!(
            "WITH scored(id, score) AS ({}),
                  best(id, score) AS (SELECT id, SUM(score) FROM scored GROUP BY id
                                      ORDER BY 2, id DESC LIMIT ?4)
             SELECT d.message_id, d.session_id, d.role, d.created_at, d.text, best.score
             FROM best JOIN history_docs AS d ON d.message_id = best.id
             ORDER BY best.score, d.message_id DESC",
            scored.join(" UNION ALL ")
        );
        // Safe: only placeholders are formatted in; the queries are bound.
        let mut query = sqlx::query_as::<_, Row>(AssertSqlSafe(sql))
            .bind(from)
            .bind(to)
            .bind(sql_limit(SCORED_PER_QUERY))
            .bind(sql_limit(limit));
        for expr in exprs {
            query = query.bind(expr);
        }
        let rows = query
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("search the conversation"))?;
        Ok(rows.into_iter().map(|r| (r.doc, r.score)).collect())
    }

    /// Up to `limit` indexed messages containing every one of `terms` (LIKE; the fallback
    /// without FTS5), created in `[from, to)`, newest first.
    pub async fn search_history_like(
        &self,
        terms: &[String],
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<HistoryDoc>, StoreError> {
        let patterns: Vec<String> = terms.iter().map(|t| like_escape(t)).collect();
        let patterns = serde_json::Value::from(patterns).to_string();
        sqlx::query_as(
            "SELECT message_id, session_id, role, created_at, text FROM history_docs AS d
             WHERE d.created_at >= ?2 AND d.created_at < ?3 AND NOT EXISTS (
                 SELECT 1 FROM json_each(?1) AS t
                 WHERE d.text NOT LIKE '%' || t.value || '%' ESCAPE '\\')
             ORDER BY message_id DESC LIMIT ?4",
        )
        .bind(patterns)
        .bind(from)
        .bind(to)
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("search the conversation"))
    }

    /// Up to `limit` indexed messages created in `[from, to)`, oldest first (what was said on a
    /// day).
    pub async fn history_between(
        &self,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<HistoryDoc>, StoreError> {
        sqlx::query_as(
            "SELECT message_id, session_id, role, created_at, text FROM history_docs
             WHERE created_at >= ?1 AND created_at < ?2 ORDER BY created_at, message_id LIMIT ?3",
        )
        .bind(from)
        .bind(to)
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list the conversation"))
    }

    /// The indexed messages `ids` that exist (in no particular order).
    pub async fn history_docs_by_id(&self, ids: &[i64]) -> Result<Vec<HistoryDoc>, StoreError> {
        let json = serde_json::Value::from(ids.to_vec()).to_string();
        sqlx::query_as(
            "SELECT message_id, session_id, role, created_at, text FROM history_docs
             WHERE message_id IN (SELECT value FROM json_each(?1))",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read indexed messages"))
    }

    /// For each of the indexed messages `ids`, the indexed messages just before and just after
    /// it in its session, as `(id, -1 | 1, neighbour)`, in one query.
    pub async fn history_neighbours(
        &self,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64, HistoryDoc)>, StoreError> {
        #[derive(FromRow)]
        struct Row {
            hit: i64,
            side: i64,
            #[sqlx(flatten)]
            doc: HistoryDoc,
        }
        let json = serde_json::Value::from(ids.to_vec()).to_string();
        let rows: Vec<Row> = sqlx::query_as(
            "WITH hit(id, session_id) AS (
                 SELECT d.message_id, d.session_id FROM json_each(?1) AS j
                 JOIN history_docs AS d ON d.message_id = j.value)
             SELECT hit.id AS hit, -1 AS side, n.message_id, n.session_id, n.role, n.created_at, n.text
             FROM hit JOIN history_docs AS n ON n.message_id = (
                 SELECT message_id FROM history_docs WHERE session_id = hit.session_id
                 AND message_id < hit.id ORDER BY message_id DESC LIMIT 1)
             UNION ALL
             SELECT hit.id, 1, n.message_id, n.session_id, n.role, n.created_at, n.text
             FROM hit JOIN history_docs AS n ON n.message_id = (
                 SELECT message_id FROM history_docs WHERE session_id = hit.session_id
                 AND message_id > hit.id ORDER BY message_id LIMIT 1)",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read messages' neighbours"))?;
        Ok(rows.into_iter().map(|r| (r.hit, r.side, r.doc)).collect())
    }

    /// The titles of the sessions `ids` that exist and have one.
    pub async fn session_titles(&self, ids: &[i64]) -> Result<Vec<(i64, String)>, StoreError> {
        let json = serde_json::Value::from(ids.to_vec()).to_string();
        sqlx::query_as(
            "SELECT id, title FROM sessions
             WHERE id IN (SELECT value FROM json_each(?1)) AND title IS NOT NULL",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read session titles"))
    }

    /// The indexed message ids, ascending (for checks).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn history_index_ids(&self, fts: bool) -> Result<Vec<i64>, StoreError> {
        let sql = if fts {
            "SELECT rowid FROM history_fts ORDER BY rowid"
        } else {
            "SELECT message_id FROM history_docs ORDER BY message_id"
        };
        sqlx::query_scalar(sql)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("read the conversation index"))
    }
}

impl Store {
    /// Moves message `id` to `at_ms` (tests of time ranges).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn set_message_time(&self, id: i64, at_ms: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE messages SET created_at = ?2 WHERE id = ?1")
            .bind(id)
            .bind(at_ms)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("move a message in time"))?;
        Ok(())
    }
}
