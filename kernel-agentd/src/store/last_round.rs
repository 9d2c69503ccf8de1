//! A session's last round as one thing: the owner message that starts it (what `/retry` and an
//! edit run again) and dropping the whole round so a new try replaces it in the history.

use super::{Store, StoreError, StoredMessage};

impl Store {
    /// The user message that starts session `session_id`'s last round, unless a fold already
    /// moved that round into the session summary (it cannot be replaced then).
    pub async fn last_round_start(
        &self,
        session_id: i64,
    ) -> Result<Option<StoredMessage>, StoreError> {
        let ordinal: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(ordinal) FROM messages WHERE session_id = ?1 AND starts_round = 1
               AND ordinal > COALESCE(
                 (SELECT through_ordinal FROM session_summaries WHERE session_id = ?1), -1)",
        )
        .bind(session_id)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("find the last round"))?;
        let Some(ordinal) = ordinal else {
            return Ok(None);
        };
        let mut messages = self.load_after(session_id, ordinal - 1).await?;
        if messages.is_empty() {
            return Ok(None);
        }
        Ok(Some(messages.swap_remove(0)))
    }

    /// Deletes session `session_id`'s messages from `ordinal` on (a round replaced by a new
    /// try); how many were deleted. The usage ledger keeps the calls that made them.
    pub async fn drop_round_from(&self, session_id: i64, ordinal: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM messages WHERE session_id = ?1 AND ordinal >= ?2")
            .bind(session_id)
            .bind(ordinal)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("drop a replaced round"))?;
        Ok(done.rows_affected())
    }
}

impl Store {
    /// Forgets turn `turn_id` of session `session_id` as if it never ran (an owner's edit
    /// restarts it): its round (the session's last, it holds the gate) when `stored` says its
    /// user message was stored, its idempotency keys (the restarted turn takes them again) and
    /// its running record, in one transaction. The usage ledger keeps its calls.
    pub async fn forget_turn(
        &self,
        session_id: i64,
        turn_id: &str,
        stored: bool,
    ) -> Result<(), StoreError> {
        let op = "forget a restarted turn";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        if stored {
            sqlx::query(
                "DELETE FROM messages WHERE session_id = ?1 AND ordinal >= (
                   SELECT MAX(ordinal) FROM messages WHERE session_id = ?1 AND starts_round = 1)",
            )
            .bind(session_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        }
        sqlx::query("DELETE FROM intake_keys WHERE turn_id = ?1")
            .bind(turn_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        sqlx::query("DELETE FROM running_turns WHERE turn_id = ?1")
            .bind(turn_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(())
    }
}
