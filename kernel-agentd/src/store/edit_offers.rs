//! The `edit_offers` table: the owner's edits of answered messages waiting for "Answer the
//! edited message" (issue 47), keyed by the edited message's idempotency key: the session it
//! belongs to, its newest text, and the chat message that offers it (so a second edit updates
//! that offer). Kept in agentd so an offer outlives a kernel-tg restart; a press takes it.

use std::time::Duration;

use super::{Store, StoreError, now_millis};

/// A pending edit of an answered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOffer {
    pub session_id: i64,
    /// The message's newest text.
    pub text: String,
    /// The chat message offering to answer it, once the client said.
    pub offer_message_id: Option<i64>,
}

impl Store {
    /// Records edit `text` of message `key` (of session `session_id`), offered by chat message
    /// `offer` when given (otherwise the offer recorded before stays); the offer now recorded.
    pub async fn save_edit_offer(
        &self,
        key: &str,
        session_id: i64,
        text: &str,
        offer: Option<i64>,
    ) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar(
            "INSERT INTO edit_offers (message_key, session_id, text, offer_message_id, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (message_key) DO UPDATE SET session_id = ?2, text = ?3,
                 offer_message_id = COALESCE(?4, offer_message_id), updated_at = ?5
             RETURNING offer_message_id",
        )
        .bind(key)
        .bind(session_id)
        .bind(text)
        .bind(offer)
        .bind(now_millis())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("record an edit offer"))
    }

    /// The pending edit of message `key`, if any.
    pub async fn edit_offer(&self, key: &str) -> Result<Option<EditOffer>, StoreError> {
        let row: Option<(i64, String, Option<i64>)> = sqlx::query_as(
            "SELECT session_id, text, offer_message_id FROM edit_offers WHERE message_key = ?1",
        )
        .bind(key)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read an edit offer"))?;
        Ok(row.map(|(session_id, text, offer_message_id)| EditOffer {
            session_id,
            text,
            offer_message_id,
        }))
    }

    /// Forgets the pending edit of message `key` (answered).
    pub async fn drop_edit_offer(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM edit_offers WHERE message_key = ?1")
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("forget an edit offer"))?;
        Ok(())
    }

    /// Forgets pending edits last changed more than `age` ago; how many.
    pub async fn forget_edit_offers_older_than(&self, age: Duration) -> Result<u64, StoreError> {
        let cutoff_ms =
            now_millis().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        let done = sqlx::query("DELETE FROM edit_offers WHERE updated_at < ?1")
            .bind(cutoff_ms)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("forget old edit offers"))?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::store::Store;

    #[tokio::test]
    async fn an_offer_keeps_its_chat_message_through_a_second_edit_and_a_press_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let session = store.create_session("p", "m").await.unwrap().id;
        assert_eq!(
            store
                .save_edit_offer("tg:1:5", session, "a", None)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .save_edit_offer("tg:1:5", session, "a", Some(40))
                .await
                .unwrap(),
            Some(40)
        );
        assert_eq!(
            store
                .save_edit_offer("tg:1:5", session, "b", None)
                .await
                .unwrap(),
            Some(40),
            "a second edit names the same offer"
        );
        let offer = store.edit_offer("tg:1:5").await.unwrap().unwrap();
        assert_eq!((offer.session_id, offer.text.as_str()), (session, "b"));
        store.drop_edit_offer("tg:1:5").await.unwrap();
        assert_eq!(store.edit_offer("tg:1:5").await.unwrap(), None);
        store
            .save_edit_offer("tg:1:6", session, "c", None)
            .await
            .unwrap();
        let hour = Duration::from_secs(3600);
        assert_eq!(store.forget_edit_offers_older_than(hour).await.unwrap(), 0);
        assert!(store.edit_offer("tg:1:6").await.unwrap().is_some());
    }
}
