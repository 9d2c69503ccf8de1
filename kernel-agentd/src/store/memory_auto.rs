//! What the auto-memory job writes: memories with `source = 'auto'` (added with their index
//! entry in one transaction, refreshed when found again, the least important oldest dropped
//! over the cap) and the daily notes (one Markdown text per local day, appended).

use chrono::{DateTime, Utc};

use super::memory::MemoryRow;
use super::{Store, StoreError, from_millis, now_millis};

/// A day's note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyNote {
    /// `YYYY-MM-DD` (local).
    pub date: String,
    /// Markdown.
    pub text: String,
    pub updated_at: DateTime<Utc>,
}

impl Store {
    /// Stores an automatic memory of `importance` (from `origin` when not from the owner) and,
    /// when `terms` is given, its index entry, in one transaction.
    pub async fn add_auto_memory(
        &self,
        text: &str,
        terms: Option<&str>,
        importance: u8,
        origin: Option<&str>,
    ) -> Result<MemoryRow, StoreError> {
        let op = "add an automatic memory";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let now = now_millis();
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO memories (text, created_at, source, importance, refreshed_at, origin)
             VALUES (?1, ?2, 'auto', ?3, ?2, ?4) RETURNING id",
        )
        .bind(text)
        .bind(now)
        .bind(i64::from(importance))
        .bind(origin)
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        if let Some(terms) = terms {
            sqlx::query("INSERT INTO memories_fts (rowid, terms) VALUES (?1, ?2)")
                .bind(id)
                .bind(terms)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(MemoryRow {
            id,
            text: text.to_owned(),
            created_at: from_millis(now, || format!("memory {id}"))?,
            auto: true,
            origin: origin.map(str::to_owned),
        })
    }

    /// Marks memory `id` as found again now; an automatic one keeps the higher importance.
    /// Whether it still exists.
    pub async fn refresh_memory(&self, id: i64, importance: u8) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE memories SET refreshed_at = ?2,
                 importance = CASE WHEN source = 'auto'
                     THEN MAX(COALESCE(importance, 0), ?3) ELSE importance END
             WHERE id = ?1",
        )
        .bind(id)
        .bind(now_millis())
        .bind(i64::from(importance))
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("refresh a memory"))?;
        Ok(done.rows_affected() > 0)
    }

    /// The automatic memories beyond the `keep` most valuable: the least important first, then
    /// the longest unconfirmed (oldest refresh), then the oldest.
    pub async fn auto_memories_over(&self, keep: usize) -> Result<Vec<i64>, StoreError> {
        sqlx::query_scalar(
            "SELECT id FROM memories WHERE source = 'auto'
             ORDER BY COALESCE(importance, 0) DESC, COALESCE(refreshed_at, created_at) DESC,
                      id DESC
             LIMIT -1 OFFSET ?1",
        )
        .bind(i64::try_from(keep).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("find automatic memories over the cap"))
    }

    /// Appends `text` to the note of `date` (a blank line between runs), creating it.
    pub async fn append_daily_note(&self, date: &str, text: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO daily_notes (date, text, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (date) DO UPDATE
             SET text = daily_notes.text || char(10) || char(10) || excluded.text,
                 updated_at = excluded.updated_at",
        )
        .bind(date)
        .bind(text)
        .bind(now_millis())
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("append to a daily note"))?;
        Ok(())
    }

    /// The note of `date`, if there is one.
    pub async fn daily_note(&self, date: &str) -> Result<Option<DailyNote>, StoreError> {
        let row: Option<(String, String, i64)> =
            sqlx::query_as("SELECT date, text, updated_at FROM daily_notes WHERE date = ?1")
                .bind(date)
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::db("read a daily note"))?;
        row.map(|(date, text, at)| {
            Ok(DailyNote {
                updated_at: from_millis(at, || format!("note {date}"))?,
                date,
                text,
            })
        })
        .transpose()
    }
}
