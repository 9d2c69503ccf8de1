//! Messages of a session: append in order, load all or the last rounds, repair, delete, count.
//!
//! A message row keeps its role and its blocks as JSON. A *round* begins at a user turn: a user
//! message with at least one block that is not a tool result (tool results travel in user
//! messages but continue the round). Rows carry that fact as `starts_round`.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::sessions::touch;
use super::{Store, StoreError, from_millis, now_millis};
use crate::conversation::{Block, Message, Role};

/// A message as stored, with its id and its place in the session.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    pub id: i64,
    /// 0-based position in the session; strictly increasing, gaps after deletions.
    pub ordinal: i64,
    pub message: Message,
    pub created_at: DateTime<Utc>,
}

/// A `messages` row as SQLite has it.
#[derive(FromRow)]
struct RawMessage {
    id: i64,
    ordinal: i64,
    role: String,
    content: String,
    created_at: i64,
}

impl TryFrom<RawMessage> for StoredMessage {
    type Error = StoreError;

    fn try_from(r: RawMessage) -> Result<Self, StoreError> {
        let role = match r.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => {
                return Err(StoreError::Corrupt(format!(
                    "message {}: unknown role",
                    r.id
                )));
            }
        };
        let content: Vec<Block> = serde_json::from_str(&r.content)
            .map_err(|e| StoreError::Corrupt(format!("message {}: bad content: {e}", r.id)))?;
        Ok(StoredMessage {
            id: r.id,
            ordinal: r.ordinal,
            message: Message { role, content },
            created_at: from_millis(r.created_at, || format!("message {}", r.id))?,
        })
    }
}

/// A message ready to be written: role, JSON blocks and whether it begins a round.
struct Encoded {
    role: &'static str,
    content: String,
    starts_round: bool,
}

fn encode(message: &Message) -> Result<Encoded, StoreError> {
    let content = serde_json::to_string(&message.content)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a message: {e}")))?;
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Ok(Encoded {
        role,
        content,
        starts_round: starts_round(message),
    })
}

/// Appends `messages` to session `session_id` inside `tx` (see [`Store::append_messages`]).
pub(super) async fn insert_messages(
    tx: &mut SqliteConnection,
    session_id: i64,
    messages: &[Message],
    op: &'static str,
) -> Result<Vec<i64>, StoreError> {
    let encoded = messages.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
    touch(&mut *tx, session_id).await?;
    let created_at = now_millis();
    let mut ids = Vec::with_capacity(encoded.len());
    for m in &encoded {
        // The ordinal continues after the session's last one (computed by the INSERT itself:
        // one round trip to the connection's thread per message, inside the transaction).
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO messages (session_id, ordinal, role, content, created_at, starts_round)
             VALUES (?1, (SELECT COALESCE(MAX(ordinal) + 1, 0) FROM messages WHERE session_id = ?1),
                     ?2, ?3, ?4, ?5)
             RETURNING id",
        )
        .bind(session_id)
        .bind(m.role)
        .bind(&m.content)
        .bind(created_at)
        .bind(m.starts_round)
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        ids.push(id);
    }
    Ok(ids)
}

/// Whether `message` is a user turn, the start of a round.
fn starts_round(message: &Message) -> bool {
    message.role == Role::User
        && message
            .content
            .iter()
            .any(|b| !matches!(b, Block::ToolResult { .. }))
}

impl Store {
    /// Appends `messages` to session `session_id` in one transaction: ordinals continue after
    /// the current last one and the session becomes the most recently active. Returns the new
    /// ids in order. `NotFound` if the session does not exist.
    pub async fn append_messages(
        &self,
        session_id: i64,
        messages: &[Message],
    ) -> Result<Vec<i64>, StoreError> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        let op = "append messages";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let ids = insert_messages(&mut tx, session_id, messages, op).await?;
        tx.commit().await.map_err(StoreError::db(op))?;
        self.messages_stored();
        tracing::debug!(session = session_id, count = ids.len(), "messages appended");
        Ok(ids)
    }

    /// Every message of session `session_id` in order (empty if there is no such session).
    pub async fn load_messages(&self, session_id: i64) -> Result<Vec<StoredMessage>, StoreError> {
        self.load_from(session_id, i64::MIN).await
    }

    /// The last `rounds` rounds of session `session_id`: the messages from the start of the
    /// `rounds`-th last user turn to the end. With fewer rounds stored, everything from the
    /// first user turn; messages before the first user turn are never returned, so the result
    /// never starts with an assistant message or a tool result.
    #[cfg(any(test, feature = "test-support"))]
    pub async fn load_last_rounds(
        &self,
        session_id: i64,
        rounds: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let Some(offset) = rounds.checked_sub(1) else {
            return Ok(Vec::new());
        };
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let start: Option<i64> = sqlx::query_scalar(
            "SELECT COALESCE(
                 (SELECT ordinal FROM messages WHERE session_id = ?1 AND starts_round = 1
                  ORDER BY ordinal DESC LIMIT 1 OFFSET ?2),
                 (SELECT MIN(ordinal) FROM messages WHERE session_id = ?1 AND starts_round = 1))",
        )
        .bind(session_id)
        .bind(offset)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("find the last rounds"))?;
        match start {
            Some(ordinal) => self.load_from(session_id, ordinal).await,
            None => Ok(Vec::new()),
        }
    }

    /// Messages of `session_id` with `ordinal > after`, in order.
    pub async fn load_after(
        &self,
        session_id: i64,
        after: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.load_from(session_id, after.saturating_add(1)).await
    }

    /// Messages of `session_id` with `ordinal >= from`, in order.
    async fn load_from(
        &self,
        session_id: i64,
        from: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let raws: Vec<RawMessage> = sqlx::query_as(
            "SELECT id, ordinal, role, content, created_at FROM messages
             WHERE session_id = ?1 AND ordinal >= ?2 ORDER BY ordinal",
        )
        .bind(session_id)
        .bind(from)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("load messages"))?;
        raws.into_iter().map(StoredMessage::try_from).collect()
    }

    /// Up to `limit` messages of any session with an id above `after`, by id (the auto-memory
    /// job reads what is new since its last run).
    pub async fn messages_after(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let raws: Vec<RawMessage> = sqlx::query_as(
            "SELECT id, ordinal, role, content, created_at FROM messages
             WHERE id > ?1 ORDER BY id LIMIT ?2",
        )
        .bind(after)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("load new messages"))?;
        raws.into_iter().map(StoredMessage::try_from).collect()
    }

    /// How many user turns (round starts) of any session have an id above `after`, and the
    /// highest message id (`after` when there is none).
    pub async fn user_turns_after(&self, after: i64) -> Result<(u64, i64), StoreError> {
        let (count, max): (i64, Option<i64>) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM messages WHERE id > ?1 AND starts_round = 1),
                    (SELECT MAX(id) FROM messages)",
        )
        .bind(after)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("count new user turns"))?;
        Ok((
            u64::try_from(count).unwrap_or(0),
            max.unwrap_or(after).max(after),
        ))
    }

    /// Replaces the role and blocks of message `id` in place (transcript repair).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn replace_message(&self, id: i64, message: &Message) -> Result<(), StoreError> {
        let m = encode(message)?;
        let done = sqlx::query(
            "UPDATE messages SET role = ?1, content = ?2, starts_round = ?3 WHERE id = ?4",
        )
        .bind(m.role)
        .bind(&m.content)
        .bind(m.starts_round)
        .bind(id)
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("replace a message"))?;
        if done.rows_affected() == 0 {
            Err(StoreError::NotFound)
        } else {
            Ok(())
        }
    }

    /// Deletes the messages `ids` (missing ones are skipped) in one transaction; returns how
    /// many were deleted. Ordinals of the others are kept.
    #[cfg(any(test, feature = "test-support"))]
    pub async fn delete_message_ids(&self, ids: &[i64]) -> Result<u64, StoreError> {
        self.delete_by_ids("DELETE FROM messages WHERE id = ?1", ids, "delete messages")
            .await
    }

    /// How many messages session `session_id` has.
    pub async fn message_count(&self, session_id: i64) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM messages WHERE session_id = ?1")
            .bind(session_id)
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("count messages"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(call_id: &str) -> Block {
        Block::ToolResult {
            call_id: call_id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    #[test]
    fn user_turns_start_rounds_and_tool_results_do_not() {
        assert!(starts_round(&Message::user_text("hi")));
        assert!(!starts_round(&Message::assistant_text("hi")));
        assert!(!starts_round(&Message {
            role: Role::User,
            content: vec![result("a"), result("b")]
        }));
        assert!(starts_round(&Message {
            role: Role::User,
            content: vec![result("a"), Block::text("and")]
        }));
        assert!(!starts_round(&Message {
            role: Role::User,
            content: vec![]
        }));
    }
}
