//! The owner's feedback on Kernel's answers (issue 47): a reaction on a chat message an answer
//! item became is stored with the answer's `messages` row (`answer_feedback`), found through
//! `answer_chat_messages` (written when the item's delivery is acknowledged, kept as long as
//! the answer: the outbox row itself is pruned after a week).

use std::collections::HashMap;

use super::{Store, StoreError, now_millis};

/// The answer a chat message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerOf {
    pub session_id: i64,
    /// It is its session's last answer (no later assistant message).
    pub last: bool,
}

impl Store {
    /// Stores `feedback` (an emoji; empty clears it) on the answer that became chat message
    /// `chat_message_id`; which answer, or `None` when no answer Kernel delivered became it.
    pub async fn set_feedback(
        &self,
        chat_message_id: i64,
        feedback: &str,
    ) -> Result<Option<AnswerOf>, StoreError> {
        let op = "store feedback on an answer";
        let answer: Option<(i64, i64, bool)> = sqlx::query_as(
            "SELECT m.id, m.session_id, NOT EXISTS (SELECT 1 FROM messages n
                 WHERE n.session_id = m.session_id AND n.role = 'assistant'
                   AND n.ordinal > m.ordinal)
             FROM answer_chat_messages a JOIN messages m ON m.id = a.message_id
             WHERE a.chat_message_id = ?1",
        )
        .bind(chat_message_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db(op))?;
        let Some((message_id, session_id, last)) = answer else {
            return Ok(None);
        };
        if feedback.is_empty() {
            sqlx::query("DELETE FROM answer_feedback WHERE message_id = ?1")
                .bind(message_id)
                .execute(&self.pool)
                .await
                .map_err(StoreError::db(op))?;
        } else {
            sqlx::query(
                "INSERT INTO answer_feedback (message_id, feedback, chat_message_id, created_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (message_id) DO UPDATE SET feedback = ?2, chat_message_id = ?3,
                     created_at = ?4",
            )
            .bind(message_id)
            .bind(feedback)
            .bind(chat_message_id)
            .bind(now_millis())
            .execute(&self.pool)
            .await
            .map_err(StoreError::db(op))?;
        }
        Ok(Some(AnswerOf { session_id, last }))
    }

    /// The feedback on session `session_id`'s answers, by `messages` row id.
    pub async fn feedback_of(&self, session_id: i64) -> Result<HashMap<i64, String>, StoreError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT f.message_id, f.feedback FROM answer_feedback f
             JOIN messages m ON m.id = f.message_id WHERE m.session_id = ?1",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read feedback on answers"))?;
        Ok(rows.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::conversation::{Block, Message, Role};
    use crate::store::Store;
    use crate::store::outbox::Ack;
    use crate::store::outbox::{ItemBody, NewItem};

    #[tokio::test]
    async fn a_reaction_on_an_answers_chat_message_is_stored_with_that_answer() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let session = store.create_session("p", "m").await.unwrap();
        let item = NewItem {
            turn_id: format!("{}-t", session.id),
            body: ItemBody::Answer {
                text: "hi".to_owned(),
                voice: None,
                reasoning: String::new(),
            },
            reply_to: None,
            placeholder: None,
            thread_id: None,
            outside: false,
        };
        let question = Message {
            role: Role::User,
            content: vec![Block::text("q")],
        };
        let seq = store
            .append_with_outbox(
                session.id,
                &[question, Message::assistant_text("hi")],
                &item,
            )
            .await
            .unwrap();
        assert_eq!(
            store.set_feedback(77, "👍").await.unwrap(),
            None,
            "not sent yet"
        );
        store
            .ack_outbox(&Ack {
                seq,
                parts_done: 1,
                message_ids: vec![77],
                done: true,
                failed: false,
            })
            .await
            .unwrap();
        let of = store.set_feedback(77, "👍").await.unwrap().unwrap();
        assert_eq!((of.session_id, of.last), (session.id, true));
        // The outbox row pruned (a week after delivery): the answer is still found.
        sqlx::query("DELETE FROM outbox")
            .execute(&store.pool)
            .await
            .unwrap();
        assert!(store.set_feedback(77, "🔥").await.unwrap().is_some());
        let stored = store.load_messages(session.id).await.unwrap();
        let feedback = store.feedback_of(session.id).await.unwrap();
        assert_eq!(feedback.len(), 1);
        assert_eq!(feedback.get(&stored[1].id).map(String::as_str), Some("🔥"));
        assert!(store.set_feedback(77, "").await.unwrap().is_some());
        assert!(store.feedback_of(session.id).await.unwrap().is_empty());
        // A later answer in the session: this one is no longer its last.
        store
            .append_messages(session.id, &[Message::assistant_text("later")])
            .await
            .unwrap();
        assert!(!store.set_feedback(77, "👍").await.unwrap().unwrap().last);
        assert_eq!(
            store.set_feedback(78, "👍").await.unwrap(),
            None,
            "no such message"
        );
    }
}
