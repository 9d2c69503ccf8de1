//! The `/next` queue: owner messages waiting to run as their own turns, oldest first. A queued
//! message is a [`Kept`] one: its text and, when it holds images or documents, the message whole.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError, now_millis};
use crate::conversation::Block;

/// An owner message kept to run later (queued, or refused by a budget limit until a Continue).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    /// The owner's text; with `whole`, what the queue lists (placeholders for the rest).
    pub text: String,
    /// The message as the model is to see it, when it holds more than text (images, documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<Vec<Block>>,
    /// It carries content from outside the owner (a forward, a document).
    #[serde(default)]
    pub outside_content: bool,
}

impl Kept {
    /// A text-only message.
    pub fn text(text: impl Into<String>) -> Kept {
        Kept {
            text: text.into(),
            ..Kept::default()
        }
    }
}

/// A queued message.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowUp {
    pub id: i64,
    pub kept: Kept,
    /// The owner's message its answer replies to.
    pub reply_to: Option<i64>,
    /// The session whose own lane it runs in (queued inside a Telegram topic); `None`: the
    /// main lane.
    pub session_id: Option<i64>,
    /// The idempotency key of the owner's message it came from (an edit of it finds it).
    pub key: Option<String>,
}

/// A `follow_ups` row: id, text, reply_to, whole, outside_content, session_id, message_key.
type Row = (
    i64,
    String,
    Option<i64>,
    Option<String>,
    bool,
    Option<i64>,
    Option<String>,
);

/// A queued message from its row; a `whole` that does not read leaves the text (logged), so one
/// bad row never stops the queue.
fn follow_up((id, text, reply_to, whole, outside_content, session_id, key): Row) -> FollowUp {
    let whole = whole.and_then(|w| match serde_json::from_str(&w) {
        Ok(blocks) => Some(blocks),
        Err(e) => {
            tracing::warn!(id, error = %e, "a queued message's attachments do not read; its text runs");
            None
        }
    });
    FollowUp {
        id,
        kept: Kept {
            text,
            whole,
            outside_content,
        },
        reply_to,
        session_id,
        key,
    }
}

fn to_json(blocks: &Option<Vec<Block>>) -> Result<Option<String>, StoreError> {
    blocks
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("a queued message as JSON: {e}")))
}

impl Store {
    /// Queues `kept` (to run in session `session_id`'s own lane; `None`: the main lane; from
    /// the owner's message with idempotency key `key`); returns its place in that lane's queue
    /// (1: next; each session's queue is its own).
    pub async fn push_follow_up(
        &self,
        kept: &Kept,
        reply_to: Option<i64>,
        session_id: Option<i64>,
        key: Option<&str>,
    ) -> Result<usize, StoreError> {
        let op = "queue a follow-up";
        let whole = to_json(&kept.whole)?;
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        sqlx::query(
            "INSERT INTO follow_ups (text, reply_to, created_at, whole, outside_content,
                                     session_id, message_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(&kept.text)
        .bind(reply_to)
        .bind(now_millis())
        .bind(whole)
        .bind(kept.outside_content)
        .bind(session_id)
        .bind(key)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM follow_ups WHERE session_id IS ?1")
                .bind(session_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// The queue, oldest first.
    pub async fn follow_ups(&self) -> Result<Vec<FollowUp>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, text, reply_to, whole, outside_content, session_id, message_key
             FROM follow_ups
             ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read the follow-ups"))?;
        Ok(rows.into_iter().map(follow_up).collect())
    }

    /// The oldest queued message of each queue (per session; `None`: the main lane's), oldest
    /// first.
    pub async fn follow_up_heads(&self) -> Result<Vec<FollowUp>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, text, reply_to, whole, outside_content, session_id, message_key
             FROM follow_ups
             WHERE id IN (SELECT MIN(id) FROM follow_ups GROUP BY session_id)
             ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read the follow-ups' heads"))?;
        Ok(rows.into_iter().map(follow_up).collect())
    }

    /// The oldest queued message of session `session_id`'s queue (`None`: the main lane's).
    pub async fn next_follow_up(
        &self,
        session_id: Option<i64>,
    ) -> Result<Option<FollowUp>, StoreError> {
        let row: Option<Row> = sqlx::query_as(
            "SELECT id, text, reply_to, whole, outside_content, session_id, message_key
             FROM follow_ups WHERE session_id IS ?1
             ORDER BY id LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read the next follow-up"))?;
        Ok(row.map(follow_up))
    }

    /// Replaces the text of the queued text message the owner's message `key` became (an edit
    /// while it waits); whether one was there. A message queued whole (images, documents) keeps
    /// its content: its edit is not a queued text's.
    pub async fn replace_follow_up(&self, key: &str, text: &str) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE follow_ups SET text = ?2 WHERE message_key = ?1 AND whole IS NULL")
                .bind(key)
                .bind(text)
                .execute(&self.pool)
                .await
                .map_err(StoreError::db("replace a follow-up's text"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Removes the queued message `id`; whether it was still there.
    pub async fn take_follow_up(&self, id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM follow_ups WHERE id = ?1")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("take a follow-up"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Empties the queue; how many were dropped.
    pub async fn clear_follow_ups(&self) -> Result<usize, StoreError> {
        let done = sqlx::query("DELETE FROM follow_ups")
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("clear the follow-ups"))?;
        Ok(usize::try_from(done.rows_affected()).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::{Kept, Store};
    use crate::conversation::Block;

    #[tokio::test]
    async fn the_queue_keeps_its_order_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        assert_eq!(
            store
                .push_follow_up(&Kept::text("one"), Some(7), None, Some("tg:1:7"))
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            store
                .push_follow_up(&Kept::text("two"), None, Some(5), None)
                .await
                .unwrap(),
            1,
            "each session's queue is its own"
        );
        let queue = store.follow_ups().await.unwrap();
        let texts: Vec<_> = queue.iter().map(|f| f.kept.text.as_str()).collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(queue[0].reply_to, Some(7));
        // A message queued inside a topic keeps its session.
        assert_eq!((queue[0].session_id, queue[1].session_id), (None, Some(5)));
        assert_eq!(queue[0].key.as_deref(), Some("tg:1:7"));
        // An edit of the message while it waits replaces its text; an unknown key nothing.
        assert!(store.replace_follow_up("tg:1:7", "one!").await.unwrap());
        assert!(!store.replace_follow_up("tg:1:8", "none").await.unwrap());
        assert_eq!(store.follow_ups().await.unwrap()[0].kept.text, "one!");
        assert!(store.take_follow_up(queue[0].id).await.unwrap());
        assert!(!store.take_follow_up(queue[0].id).await.unwrap());
        assert_eq!(
            store
                .push_follow_up(&Kept::text("three"), None, None, None)
                .await
                .unwrap(),
            1
        );
        let heads: Vec<_> = store
            .follow_up_heads()
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.kept.text)
            .collect();
        assert_eq!(heads, ["two", "three"]);
        assert_eq!(
            store
                .next_follow_up(Some(5))
                .await
                .unwrap()
                .unwrap()
                .kept
                .text,
            "two"
        );
        assert_eq!(store.clear_follow_ups().await.unwrap(), 2);
        assert!(store.follow_ups().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_message_with_an_image_is_queued_whole_with_its_trust() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let kept = Kept {
            text: "[图片已处理]\n\nwhat is it?".into(),
            whole: Some(vec![
                Block::Image {
                    mime_type: "image/png".into(),
                    data: vec![1, 2, 3],
                },
                Block::text("what is it?"),
            ]),
            outside_content: true,
        };
        store
            .push_follow_up(&kept, None, None, Some("tg:1:9"))
            .await
            .unwrap();
        // A message queued whole keeps its content when edited.
        assert!(!store.replace_follow_up("tg:1:9", "changed").await.unwrap());
        assert_eq!(store.follow_ups().await.unwrap()[0].kept, kept);
        // A row whose attachments do not read runs as its text; the queue goes on.
        sqlx::query("UPDATE follow_ups SET whole = 'not json'")
            .execute(&store.pool)
            .await
            .unwrap();
        let next = store.next_follow_up(None).await.unwrap().unwrap();
        assert_eq!(next.kept.whole, None);
        assert_eq!(next.kept.text, kept.text);
        assert!(next.kept.outside_content);
    }
}
