//! The `running_turns` table: each owner turn from the moment its user message is stored (same
//! transaction, [`Store::append_user_message`]) until its outcome's outbox item is (same
//! transaction, [`Store::append_with_outbox`]). A row still 'running' at start is a turn an
//! agentd crash cut off: [`Store::report_cut_off_turns`] turns it into an outbox item for the
//! owner, and [`Store::claim_rerun`] lets its message run again once — as the model first saw
//! it (images, documents and transcripts in full, not the slimmed stored message) and as
//! trusted as it was (`outside_content`).

use sqlx::SqliteConnection;

use super::{Store, StoreError, StoredMessage, now_millis};
use crate::conversation::{Block, Message, Role};

/// Where a running owner turn's answer goes (the client's message ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Destination {
    pub reply_to: Option<i64>,
    pub placeholder: Option<i64>,
}

/// An owner turn as recorded while it runs: where its answer goes and what running it again
/// needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Running {
    pub to: Destination,
    /// The user message as the model saw it, when the stored one is slimmed (it held an image,
    /// a document or a voice note); `None` when they are the same.
    pub full: Option<Message>,
    /// The message carried content from outside the owner (a forward, a document).
    pub outside_content: bool,
    /// The owner wants the answer spoken.
    pub voice_reply: bool,
}

impl From<Destination> for Running {
    fn from(to: Destination) -> Running {
        Running {
            to,
            ..Running::default()
        }
    }
}

/// A turn an agentd crash cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutOffTurn {
    pub turn_id: String,
    pub session_id: i64,
    pub to: Destination,
}

/// A cut-off turn claimed for running again: its user message (as the model first saw it) and
/// where its answer went.
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    pub message: Message,
    pub to: Destination,
    /// The session it ran in and the Telegram topic that session lives in, if any (a topic's
    /// turn runs again in the topic's session and answers there).
    pub session_id: i64,
    pub thread_id: Option<i64>,
    pub outside_content: bool,
    pub voice_reply: bool,
}

/// Records turn `turn_id` as running on `conn` (within the caller's transaction).
pub(super) async fn insert_running(
    conn: &mut SqliteConnection,
    turn_id: &str,
    session_id: i64,
    message_id: i64,
    running: &Running,
    op: &'static str,
) -> Result<(), StoreError> {
    let input = match &running.full {
        Some(full) => Some(
            serde_json::to_string(&full.content)
                .map_err(|e| StoreError::Corrupt(format!("a message as JSON: {e}")))?,
        ),
        None => None,
    };
    sqlx::query(
        "INSERT INTO running_turns (turn_id, session_id, message_id, reply_to, placeholder,
                                    created_at, input, outside_content, voice_reply)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .bind(turn_id)
    .bind(session_id)
    .bind(message_id)
    .bind(running.to.reply_to)
    .bind(running.to.placeholder)
    .bind(now_millis())
    .bind(input)
    .bind(running.outside_content)
    .bind(running.voice_reply)
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
    // What `/retry` runs again: the session's last ended owner turn's message in full.
    sqlx::query(
        "INSERT OR REPLACE INTO retry_inputs (session_id, message_id, input, outside_content,
                                              voice_reply)
         SELECT session_id, message_id, input, outside_content, voice_reply FROM running_turns
         WHERE turn_id = ?1 AND state = 'running'",
    )
    .bind(turn_id)
    .execute(&mut *conn)
    .await
    .map_err(StoreError::db(op))?;
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

/// Marks running turn `turn_id` as cut off on `conn` (its notice is stored in this transaction);
/// its time becomes now, so that it can be run again for a full week after the owner is told.
pub(super) async fn mark_cut_off(
    conn: &mut SqliteConnection,
    turn_id: &str,
    op: &'static str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE running_turns SET state = 'cut_off', created_at = ?2 WHERE turn_id = ?1")
        .bind(turn_id)
        .bind(now_millis())
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(())
}

impl Store {
    /// Stored user message `message` of session `session_id` as its turn ran it, for `/retry`:
    /// in full (when the stored one is slimmed), how trusted it was and whether a voice reply
    /// was asked for; `None` when not kept (an older round, a turn from before this was kept).
    pub async fn retry_input(
        &self,
        session_id: i64,
        message: &StoredMessage,
    ) -> Result<Option<Rerun>, StoreError> {
        let row: Option<(Option<String>, bool, bool)> = sqlx::query_as(
            "SELECT input, outside_content, voice_reply FROM retry_inputs
             WHERE session_id = ?1 AND message_id = ?2",
        )
        .bind(session_id)
        .bind(message.id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read the message to retry"))?;
        let Some((input, outside_content, voice_reply)) = row else {
            return Ok(None);
        };
        let message = match input {
            Some(input) => Message {
                role: Role::User,
                content: serde_json::from_str(&input)
                    .map_err(|e| StoreError::Corrupt(format!("a message to retry: {e}")))?,
            },
            None => message.message.clone(),
        };
        Ok(Some(Rerun {
            message,
            to: Destination::default(),
            session_id,
            thread_id: None,
            outside_content,
            voice_reply,
        }))
    }

    /// Claims cut-off turn `turn_id` for running again (once): its user message as the model
    /// first saw it, how trusted it was and where its answer went; `None` when there is no such
    /// cut-off turn (unknown, forged, already claimed, or its session deleted).
    pub async fn claim_rerun(&self, turn_id: &str) -> Result<Option<Rerun>, StoreError> {
        let op = "claim a cut-off turn";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        type Row = (
            String,
            Option<String>,
            Option<i64>,
            Option<i64>,
            bool,
            bool,
            i64,
            Option<i64>,
        );
        let row: Option<Row> = sqlx::query_as(
            "SELECT m.content, r.input, r.reply_to, r.placeholder, r.outside_content,
                    r.voice_reply, r.session_id, t.thread_id
             FROM running_turns r JOIN messages m ON m.id = r.message_id
                  LEFT JOIN topic_sessions t ON t.session_id = r.session_id
             WHERE r.turn_id = ?1 AND r.state = 'cut_off'",
        )
        .bind(turn_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let Some((
            stored,
            input,
            reply_to,
            placeholder,
            outside_content,
            voice_reply,
            session_id,
            thread_id,
        )) = row
        else {
            return Ok(None);
        };
        let content = input.unwrap_or(stored);
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
            session_id,
            thread_id,
            outside_content,
            voice_reply,
        }))
    }

    /// Forgets the cut-off turns (run again or not) reported more than `age` ago, full messages
    /// and all: their button then answers that there is nothing to run. How many.
    pub async fn forget_cut_off_turns_older_than(
        &self,
        age: std::time::Duration,
    ) -> Result<u64, StoreError> {
        let cutoff_ms =
            now_millis().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        let done =
            sqlx::query("DELETE FROM running_turns WHERE state != 'running' AND created_at < ?1")
                .bind(cutoff_ms)
                .execute(&self.pool)
                .await
                .map_err(StoreError::db("forget old cut-off turns"))?;
        Ok(done.rows_affected())
    }

    /// Drops the full message of cut-off turn `turn_id` once it runs again (the stored one
    /// stays in the session).
    pub async fn forget_rerun_input(&self, turn_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE running_turns SET input = NULL WHERE turn_id = ?1 AND state = 'rerun'")
            .bind(turn_id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("forget a re-run turn's message"))?;
        Ok(())
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
