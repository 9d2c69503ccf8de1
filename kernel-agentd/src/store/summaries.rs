//! Session summaries: per session, the summary (JSON, owned by `request::session_summary`) of the
//! rounds folded out of the request and the last message ordinal it covers; and the
//! compare-and-swap a background rewrite of it stores through.

use super::{Store, StoreError, now_millis};

/// A session's stored summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSummary {
    /// The summary as JSON.
    pub summary: String,
    /// Messages with an ordinal up to this one are folded into the summary.
    pub through_ordinal: i64,
}

impl Store {
    /// The summary of `session_id`, if it has one.
    pub async fn load_summary(&self, session_id: i64) -> Result<Option<StoredSummary>, StoreError> {
        let row: Option<(String, i64)> = sqlx::query_as(
            "SELECT summary, through_ordinal FROM session_summaries WHERE session_id = ?1",
        )
        .bind(session_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read a session summary"))?;
        Ok(row.map(|(summary, through_ordinal)| StoredSummary {
            summary,
            through_ordinal,
        }))
    }

    /// Stores the summary of `session_id`, replacing the previous one.
    pub async fn save_summary(
        &self,
        session_id: i64,
        summary: &StoredSummary,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO session_summaries (session_id, summary, through_ordinal, updated_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary,
                 through_ordinal = excluded.through_ordinal, updated_at = excluded.updated_at",
        )
        .bind(session_id)
        .bind(&summary.summary)
        .bind(summary.through_ordinal)
        .bind(now_millis())
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("write a session summary"))?;
        Ok(())
    }

    /// Replaces the summary of `session_id` by `summary` only if the stored one is still
    /// `read` (same JSON, same ordinal); whether it was replaced.
    pub async fn replace_summary_if(
        &self,
        session_id: i64,
        read: &StoredSummary,
        summary: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE session_summaries SET summary = ?1, updated_at = ?2
             WHERE session_id = ?3 AND summary = ?4 AND through_ordinal = ?5",
        )
        .bind(summary)
        .bind(now_millis())
        .bind(session_id)
        .bind(&read.summary)
        .bind(read.through_ordinal)
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("rewrite a session summary"))?;
        Ok(done.rows_affected() == 1)
    }
}
