//! The `running_turns` table: each owner turn from the moment its user message is stored (same
//! transaction, [`Store::append_user_message`]) until its outcome's outbox item is (same
//! transaction, [`Store::append_with_outbox`]). A row still 'running' at start is a turn an
//! agentd crash cut off: [`Store::report_cut_off_turns`] turns it into an outbox item for the
//! owner, and [`Store::claim_rerun`] lets its message run again once.

use sqlx::SqliteConnection;

use super::{Store, StoreError, now_millis};
use crate::conversation::{Block, Message, Role};

/// Where a running owner turn's answer goes (the client's message ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Destination {
    pub reply_to: Option<i64>,
    pub placeholder: Option<i64>,
}

/// A turn an agentd crash cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutOffTurn {
    pub turn_id: String,
    pub session_id: i64,
    pub to: Destination,
}

/// A cut-off turn claimed for running again: its user message and where its answer went.
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    pub message: Message,
    pub to: Destination,
}

/// Records turn `turn_id` as running on `conn` (within the caller's transaction).
pub(super) async fn insert_running(
    conn: &mut SqliteConnection,
    turn_id: &str,
    session_id: i64,
    message_id: i64,
    to: Destination,
    op: &'static str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO running_turns (turn_id, session_id, message_id, reply_to, placeholder,
                                    created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .bind(turn_id)
    .bind(session_id)
    .bind(message_id)
    .bind(to.reply_to)
    .bind(to.placeholder)
    .bind(now_millis())
    .execute(conn)
    .await
    .map_err(StoreError::db(op))?;
    Ok(())
}

/// Forgets running turn `turn_id` on `conn` (its outcome is being stored in this transaction).
pub(super) async fn delete_running(
    conn: &mut SqliteConnection,
    turn_id: &str,
    op: &'static str,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM running_turns WHERE turn_id = ?1 AND state = 'running'")
        .bind(turn_id)
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(())
}

/// Records the placeholder of running turn `turn_id` on `conn`.
pub(super) async fn set_running_placeholder(
    conn: &mut SqliteConnection,
    turn_id: &str,
    placeholder: i64,
    op: &'static str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE running_turns SET placeholder = ?2 WHERE turn_id = ?1")
        .bind(turn_id)
        .bind(placeholder)
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(())
}

/// The turns still recorded as running, oldest first, read on `conn`.
pub(super) async fn running(
    conn: &mut SqliteConnection,
    op: &'static str,
) -> Result<Vec<CutOffTurn>, StoreError> {
    let rows: Vec<(String, i64, Option<i64>, Option<i64>)> = sqlx::query_as(
        "SELECT turn_id, session_id, reply_to, placeholder FROM running_turns
         WHERE state = 'running' ORDER BY created_at",
    )
    .fetch_all(conn)
    .await
    .map_err(StoreError::db(op))?;
    Ok(rows
        .into_iter()
        .map(|(turn_id, session_id, reply_to, placeholder)| CutOffTurn {
            turn_id,
            session_id,
            to: Destination {
                reply_to,
                placeholder,
            },
        })
        .collect())
}

/// Marks running turn `turn_id` as cut off on `conn` (its notice is stored in this transaction).
pub(super) async fn mark_cut_off(
    conn: &mut SqliteConnection,
    turn_id: &str,
    op: &'static str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE running_turns SET state = 'cut_off' WHERE turn_id = ?1")
        .bind(turn_id)
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(())
}

impl Store {
    /// Claims cut-off turn `turn_id` for running again (once): its user message's text blocks
    /// and where its answer went; `None` when there is no such cut-off turn (unknown, forged,
    /// already claimed, or its session deleted).
    pub async fn claim_rerun(&self, turn_id: &str) -> Result<Option<Rerun>, StoreError> {
        let op = "claim a cut-off turn";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let row: Option<(String, Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT m.content, r.reply_to, r.placeholder
             FROM running_turns r JOIN messages m ON m.id = r.message_id
             WHERE r.turn_id = ?1 AND r.state = 'cut_off'",
        )
        .bind(turn_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let Some((content, reply_to, placeholder)) = row else {
            return Ok(None);
        };
        let content: Vec<Block> = serde_json::from_str(&content)
            .map_err(|e| StoreError::Corrupt(format!("cut-off turn {turn_id}: {e}")))?;
        sqlx::query("UPDATE running_turns SET state = 'rerun' WHERE turn_id = ?1")
            .bind(turn_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(Some(Rerun {
            message: Message {
                role: Role::User,
                content,
            },
            to: Destination {
                reply_to,
                placeholder,
            },
        }))
    }

    /// Gives a claimed turn back (its re-run could not start: another turn runs).
    pub async fn release_rerun(&self, turn_id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE running_turns SET state = 'cut_off' WHERE turn_id = ?1 AND state = 'rerun'",
        )
        .bind(turn_id)
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("release a cut-off turn"))?;
        Ok(())
    }
}
