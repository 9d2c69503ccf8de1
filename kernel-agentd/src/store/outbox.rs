//! The `outbox` table: everything meant for the owner, written with what it delivers and kept
//! until acknowledged (then pruned after a while). `seq` is the delivery order, never reused.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::messages::insert_messages;
use super::running_turns::{
    CutOffTurn, delete_running, mark_cut_off, running, set_running_placeholder,
};
use super::{Store, StoreError, from_millis, now_millis};
use crate::conversation::Message;
use crate::failure::FailReason;
use kernel_proto::words::FailureReason;

/// What an outbox item says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemBody {
    /// A turn's final answer (Markdown) and its voice reply, if one was synthesised.
    Answer {
        text: String,
        voice: Option<Vec<u8>>,
        /// The model's reasoning over the turn (empty when none), shown only on request.
        reasoning: String,
    },
    /// A turn failed; the English message and the reason's arguments are redacted (rows stored
    /// before reasons existed read as an unknown reason).
    Failed { message: String, reason: FailReason },
    /// A turn was cancelled.
    Cancelled,
    /// A message that is not a turn's outcome (a reminder, a job's status), Markdown.
    Notice { text: String },
    /// A merge of memories proposed to the owner (memory consolidation), Markdown; the adapter
    /// adds merge / keep buttons for `proposal`.
    MemoryProposal { text: String, proposal: i64 },
    /// What a watch told the owner (`notify_owner`), Markdown; the adapter adds pause / delete
    /// buttons for the schedule `watch`.
    WatchNotice { text: String, watch: i64 },
    /// The session living in the item's topic got title `name`: the adapter renames the
    /// topic; nothing is shown to the owner.
    TopicTitle { name: String },
    /// A file for the owner (the `send_file` tool): its name, bytes and optional caption.
    File {
        name: String,
        data: Vec<u8>,
        caption: String,
    },
}

/// An item to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewItem {
    pub turn_id: String,
    pub body: ItemBody,
    /// The client's message the answer replies to (a Telegram message id).
    pub reply_to: Option<i64>,
    /// The client's placeholder for the turn (a Telegram message id).
    pub placeholder: Option<i64>,
    /// The client's topic it goes to (a Telegram `message_thread_id`); `None`: the main chat.
    pub thread_id: Option<i64>,
    /// It carries content from outside the owner (an answer of a turn that read some, a job's
    /// output, what a watch saw): a reply to it makes the owner's turn outside content.
    pub outside: bool,
}

/// A stored, unacknowledged item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredItem {
    pub seq: i64,
    pub turn_id: String,
    pub body: ItemBody,
    pub reply_to: Option<i64>,
    pub placeholder: Option<i64>,
    /// The client's topic it goes to; `None`: the main chat.
    pub thread_id: Option<i64>,
    /// Parts acknowledged so far.
    pub parts_done: u32,
    /// Of those, the parts refused for good.
    pub parts_failed: u32,
    pub created_at: DateTime<Utc>,
}

/// A delivery report for one item (see `Ack` in the API).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ack {
    pub seq: i64,
    /// Parts delivered so far; a smaller number than stored changes nothing.
    pub parts_done: u32,
    /// Telegram message ids of the delivered parts.
    pub message_ids: Vec<i64>,
    /// The part was refused for good and skipped.
    pub failed: bool,
    /// The whole item is delivered.
    pub done: bool,
}

/// The undelivered items, for `GetStatus`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub count: u64,
    /// When the oldest undelivered item was stored.
    pub oldest: Option<DateTime<Utc>>,
}

/// What an 'answer' row keeps in its `args` column (a JSON object; `reason` stays NULL): the
/// reasoning shown before the answer on request. Rows without it read as no reasoning.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct AnswerExtras {
    #[serde(default)]
    reasoning: String,
}

#[derive(FromRow)]
struct RawItem {
    seq: i64,
    turn_id: String,
    kind: String,
    text: String,
    voice: Option<Vec<u8>>,
    reply_to: Option<i64>,
    placeholder: Option<i64>,
    thread_id: Option<i64>,
    parts_done: i64,
    failed_parts: i64,
    created_at: i64,
    reason: Option<String>,
    args: Option<String>,
    file_name: Option<String>,
}

impl TryFrom<RawItem> for StoredItem {
    type Error = StoreError;

    fn try_from(r: RawItem) -> Result<Self, StoreError> {
        let body = match r.kind.as_str() {
            "answer" => ItemBody::Answer {
                text: r.text,
                voice: r.voice,
                reasoning: r
                    .args
                    .and_then(|a| serde_json::from_str::<AnswerExtras>(&a).ok())
                    .unwrap_or_default()
                    .reasoning,
            },
            "failed" => ItemBody::Failed {
                message: r.text,
                reason: FailReason {
                    reason: r.reason.as_deref().and_then(FailureReason::parse),
                    args: r
                        .args
                        .and_then(|a| serde_json::from_str(&a).ok())
                        .unwrap_or_default(),
                },
            },
            "cancelled" => ItemBody::Cancelled,
            "notice" => ItemBody::Notice { text: r.text },
            "memory_proposal" => ItemBody::MemoryProposal {
                proposal: r.args.and_then(|a| a.parse().ok()).unwrap_or_default(),
                text: r.text,
            },
            "watch_notice" => ItemBody::WatchNotice {
                watch: r.args.and_then(|a| a.parse().ok()).unwrap_or_default(),
                text: r.text,
            },
            "topic_title" => ItemBody::TopicTitle { name: r.text },
            "file" => ItemBody::File {
                name: r.file_name.unwrap_or_default(),
                data: r.voice.unwrap_or_default(),
                caption: r.text,
            },
            _ => {
                return Err(StoreError::Corrupt(format!(
                    "outbox item {}: unknown kind",
                    r.seq
                )));
            }
        };
        Ok(StoredItem {
            seq: r.seq,
            turn_id: r.turn_id,
            body,
            reply_to: r.reply_to,
            placeholder: r.placeholder,
            thread_id: r.thread_id,
            parts_done: u32::try_from(r.parts_done).unwrap_or(0),
            parts_failed: u32::try_from(r.failed_parts).unwrap_or(0),
            created_at: from_millis(r.created_at, || format!("outbox item {}", r.seq))?,
        })
    }
}

/// Inserts `item` inside `conn`'s transaction; returns its `seq`.
pub(super) async fn insert_item(
    conn: &mut SqliteConnection,
    item: &NewItem,
    op: &'static str,
) -> Result<i64, StoreError> {
    let (kind, text, voice) = match &item.body {
        ItemBody::Answer { text, voice, .. } => ("answer", text.as_str(), voice.as_deref()),
        ItemBody::Failed { message, .. } => ("failed", message.as_str(), None),
        ItemBody::Cancelled => ("cancelled", "", None),
        ItemBody::Notice { text } => ("notice", text.as_str(), None),
        ItemBody::MemoryProposal { text, .. } => ("memory_proposal", text.as_str(), None),
        ItemBody::WatchNotice { text, .. } => ("watch_notice", text.as_str(), None),
        ItemBody::TopicTitle { name } => ("topic_title", name.as_str(), None),
        ItemBody::File { data, caption, .. } => ("file", caption.as_str(), Some(data.as_slice())),
    };
    let file_name = match &item.body {
        ItemBody::File { name, .. } => Some(name.as_str()),
        _ => None,
    };
    let (reason, args) = match &item.body {
        ItemBody::Failed {
            reason:
                FailReason {
                    reason: Some(reason),
                    args,
                },
            ..
        } => (Some(reason.as_str()), serde_json::to_string(args).ok()),
        ItemBody::MemoryProposal { proposal, .. } => (None, Some(proposal.to_string())),
        ItemBody::WatchNotice { watch, .. } => (None, Some(watch.to_string())),
        ItemBody::Answer { reasoning, .. } if !reasoning.is_empty() => (
            None,
            serde_json::to_string(&AnswerExtras {
                reasoning: reasoning.clone(),
            })
            .ok(),
        ),
        _ => (None, None),
    };
    sqlx::query_scalar(
        "INSERT INTO outbox (turn_id, kind, text, voice, reply_to, placeholder, created_at,
                             reason, args, file_name, thread_id, outside)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING seq",
    )
    .bind(&item.turn_id)
    .bind(kind)
    .bind(text)
    .bind(voice)
    .bind(item.reply_to)
    .bind(item.placeholder)
    .bind(now_millis())
    .bind(reason)
    .bind(args)
    .bind(file_name)
    .bind(item.thread_id)
    .bind(item.outside)
    .fetch_one(conn)
    .await
    .map_err(StoreError::db(op))
}

impl Store {
    /// Appends `messages` to session `session_id` and stores `item`, in one transaction;
    /// returns the item's `seq`. With no messages, only the item is stored.
    pub async fn append_with_outbox(
        &self,
        session_id: i64,
        messages: &[Message],
        item: &NewItem,
    ) -> Result<i64, StoreError> {
        let op = "store an outbox item";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        if !messages.is_empty() {
            insert_messages(&mut tx, session_id, messages, op).await?;
        }
        let seq = insert_item(&mut tx, item, op).await?;
        if matches!(item.body, ItemBody::Answer { .. }) {
            // The answer it delivers, for the owner's feedback (`store::feedback`).
            sqlx::query(
                "UPDATE outbox SET answer_message = (SELECT id FROM messages
                     WHERE session_id = ?1 AND role = 'assistant' ORDER BY ordinal DESC LIMIT 1)
                 WHERE seq = ?2",
            )
            .bind(session_id)
            .bind(seq)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        }
        delete_running(&mut tx, &item.turn_id, op).await?;
        tx.commit().await.map_err(StoreError::db(op))?;
        if !messages.is_empty() {
            self.messages_stored();
        }
        tracing::debug!(seq, turn = %item.turn_id, "outbox item stored");
        Ok(seq)
    }

    /// Turns every turn still recorded as running (an agentd crash cut it off; call at start,
    /// before any turn runs) into the outbox item `item_for` makes, in one transaction
    /// (`store::running_turns`), sent to the topic of the turn's session when it has one and
    /// `item_for` names none; returns the stored items with their `seq`.
    pub async fn report_cut_off_turns(
        &self,
        item_for: impl Fn(&CutOffTurn) -> NewItem,
    ) -> Result<Vec<(i64, NewItem)>, StoreError> {
        let op = "report cut-off turns";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let turns = running(&mut tx, op).await?;
        let mut stored = Vec::with_capacity(turns.len());
        for turn in turns {
            let mut item = item_for(&turn);
            if item.thread_id.is_none() {
                // A turn of a topic's session is reported in that topic.
                item.thread_id = sqlx::query_scalar(
                    "SELECT thread_id FROM topic_sessions WHERE session_id = ?1",
                )
                .bind(turn.session_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            }
            let seq = insert_item(&mut tx, &item, op).await?;
            mark_cut_off(&mut tx, &turn.turn_id, op).await?;
            stored.push((seq, item));
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(stored)
    }

    /// Unacknowledged items with `seq > after`, in order.
    pub async fn pending_outbox(&self, after: i64) -> Result<Vec<StoredItem>, StoreError> {
        let raws: Vec<RawItem> = sqlx::query_as(
            "SELECT seq, turn_id, kind, text, voice, reply_to, placeholder, thread_id, parts_done,
                    failed_parts,
                    created_at,
                    reason, args, file_name
             FROM outbox WHERE acked_at IS NULL AND seq > ?1 ORDER BY seq",
        )
        .bind(after)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("load the outbox"))?;
        raws.into_iter().map(StoredItem::try_from).collect()
    }

    /// Whether any of `chat_message_ids` (the client's messages an owner message replies to) is
    /// a message an outbox item carrying outside content became — of any age: the mark is kept
    /// in `outside_chat_messages` when the item is acknowledged, past the outbox row's pruning.
    pub async fn carried_outside(&self, chat_message_ids: &[i64]) -> Result<bool, StoreError> {
        for id in chat_message_ids {
            let found: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM outside_chat_messages WHERE chat_message_id = ?1)",
            )
            .bind(id)
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("look up a replied-to message"))?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Stores `item` on its own; returns its `seq`.
    pub async fn store_outbox_item(&self, item: &NewItem) -> Result<i64, StoreError> {
        let op = "store an outbox item";
        let mut conn = self.pool.acquire().await.map_err(StoreError::db(op))?;
        insert_item(&mut conn, item, op).await
    }

    /// Records a delivery report; idempotent (`parts_done` never moves backwards, message ids
    /// are kept once, `done` sets `acked_at` once). Returns whether the item exists.
    pub async fn ack_outbox(&self, ack: &Ack) -> Result<bool, StoreError> {
        let op = "acknowledge an outbox item";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let row: Option<(i64, String)> =
            sqlx::query_as("SELECT parts_done, message_ids FROM outbox WHERE seq = ?1")
                .bind(ack.seq)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        let Some((parts_done, ids)) = row else {
            return Ok(false);
        };
        let mut ids: Vec<i64> = serde_json::from_str(&ids).unwrap_or_default();
        for id in &ack.message_ids {
            if !ids.contains(id) {
                ids.push(*id);
            }
        }
        let ids = serde_json::to_string(&ids)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode message ids: {e}")))?;
        let advanced = i64::from(ack.parts_done) > parts_done;
        sqlx::query(
            "UPDATE outbox SET parts_done = MAX(parts_done, ?2), message_ids = ?3,
                 failed_parts = failed_parts + ?4,
                 acked_at = CASE WHEN ?5 THEN COALESCE(acked_at, ?6) ELSE acked_at END
             WHERE seq = ?1",
        )
        .bind(ack.seq)
        .bind(i64::from(ack.parts_done))
        .bind(&ids)
        .bind(i64::from(ack.failed && advanced))
        .bind(ack.done)
        .bind(now_millis())
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        // An answer's chat messages, kept as long as the answer (`store::feedback`).
        sqlx::query(
            "INSERT OR REPLACE INTO answer_chat_messages (chat_message_id, message_id)
             SELECT j.value, o.answer_message FROM outbox o, json_each(?2) j
             WHERE o.seq = ?1 AND o.kind = 'answer' AND o.answer_message IS NOT NULL
               AND EXISTS (SELECT 1 FROM messages WHERE id = o.answer_message)",
        )
        .bind(ack.seq)
        .bind(&ids)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        // The chat messages of an item that carried outside content, kept past the row's pruning.
        sqlx::query(
            "INSERT OR IGNORE INTO outside_chat_messages (chat_message_id)
             SELECT j.value FROM outbox o, json_each(?2) j WHERE o.seq = ?1 AND o.outside = 1",
        )
        .bind(ack.seq)
        .bind(&ids)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(true)
    }

    /// Records the placeholder of turn `turn_id` on its items (if already stored).
    pub async fn set_outbox_placeholder(
        &self,
        turn_id: &str,
        message_id: i64,
    ) -> Result<(), StoreError> {
        let op = "record a placeholder";
        let mut conn = self.pool.acquire().await.map_err(StoreError::db(op))?;
        sqlx::query("UPDATE outbox SET placeholder = ?2 WHERE turn_id = ?1")
            .bind(turn_id)
            .bind(message_id)
            .execute(&mut *conn)
            .await
            .map_err(StoreError::db(op))?;
        set_running_placeholder(&mut conn, turn_id, message_id, op).await
    }

    /// How many items are undelivered, and since when the oldest waits.
    pub async fn outbox_backlog(&self) -> Result<Backlog, StoreError> {
        let (count, oldest): (i64, Option<i64>) =
            sqlx::query_as("SELECT COUNT(*), MIN(created_at) FROM outbox WHERE acked_at IS NULL")
                .fetch_one(&self.pool)
                .await
                .map_err(StoreError::db("count the outbox"))?;
        let oldest = match oldest {
            Some(ms) => Some(from_millis(ms, || "outbox".to_owned())?),
            None => None,
        };
        Ok(Backlog {
            count: u64::try_from(count).unwrap_or(0),
            oldest,
        })
    }

    /// Deletes items acknowledged before `before`; returns how many went.
    pub async fn prune_outbox(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM outbox WHERE acked_at IS NOT NULL AND acked_at < ?1")
            .bind(before.timestamp_millis())
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("prune the outbox"))?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests;
