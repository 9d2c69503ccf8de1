//! The `intake_keys` table: the idempotency keys of the owner messages a turn took, stored with
//! the turn's user message in one transaction ([`Store::append_user_message`]), so a message is
//! taken exactly when its key is. The primary key settles two concurrent requests with the same
//! key: one insert wins, the other transaction stores nothing.

use std::time::Duration;

use sqlx::SqliteConnection;
use sqlx::error::ErrorKind;

use super::messages::insert_messages;
use super::running_turns::{Running, insert_running};
use super::{Store, StoreError, now_millis};
use crate::conversation::Message;

/// Keys an earlier turn took, with the turn that took the first of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeysTaken {
    /// The keys of the request that were taken, in the request's order.
    pub keys: Vec<String>,
    /// The turn that took the first of them.
    pub turn_id: String,
}

impl Store {
    /// Which of `keys` an earlier turn took (`None`: all are free).
    pub async fn taken_keys(&self, keys: &[String]) -> Result<Option<KeysTaken>, StoreError> {
        let op = "read idempotency keys";
        let mut conn = self.pool.acquire().await.map_err(StoreError::db(op))?;
        taken(&mut conn, keys, op).await
    }

    /// Appends the user message of turn `turn_id` to session `session_id` with its idempotency
    /// `keys` and, for an owner turn, its record as running (`running`: where its answer goes;
    /// see `store::running_turns`), in one transaction; `Ok(Err(_))` when a key was taken
    /// meanwhile (then nothing is stored). Returns the message's id.
    pub async fn append_user_message(
        &self,
        session_id: i64,
        message: &Message,
        turn_id: &str,
        keys: &[String],
        running: Option<Running>,
    ) -> Result<Result<i64, KeysTaken>, StoreError> {
        let op = "store the user message";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        if let Some(taken) = taken(&mut tx, keys, op).await? {
            return Ok(Err(taken));
        }
        let ids = insert_messages(&mut tx, session_id, std::slice::from_ref(message), op).await?;
        let created_at = now_millis();
        for key in keys {
            let inserted = sqlx::query(
                "INSERT INTO intake_keys (key, turn_id, created_at) VALUES (?1, ?2, ?3)",
            )
            .bind(key)
            .bind(turn_id)
            .bind(created_at)
            .execute(&mut *tx)
            .await;
            match inserted {
                Ok(_) => {}
                Err(sqlx::Error::Database(e)) if e.kind() == ErrorKind::UniqueViolation => {
                    drop(tx);
                    return Ok(Err(self.taken_keys(keys).await?.unwrap_or(KeysTaken {
                        keys: vec![key.clone()],
                        turn_id: String::new(),
                    })));
                }
                Err(e) => return Err(StoreError::db(op)(e)),
            }
        }
        let id = ids.first().copied().unwrap_or_default();
        if let Some(running) = &running {
            insert_running(&mut tx, turn_id, session_id, id, running, op).await?;
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        self.messages_stored();
        Ok(Ok(id))
    }
}

impl Store {
    /// Deletes the keys taken more than `age` ago; returns how many went.
    /// A key guards against a message arriving twice (kernel-tg's retry after a restart, the
    /// Bot API handing an update out again), which happens within hours: Telegram keeps an
    /// undelivered update for 24 hours. The retention task drops keys older than a week, so the
    /// table does not grow with every message ever sent.
    pub async fn forget_intake_keys_older_than(&self, age: Duration) -> Result<u64, StoreError> {
        let cutoff_ms =
            now_millis().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        let done = sqlx::query("DELETE FROM intake_keys WHERE created_at < ?1")
            .bind(cutoff_ms)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("forget old idempotency keys"))?;
        Ok(done.rows_affected())
    }

    /// Makes `key` look `age` older (tests of forgetting).
    #[cfg(test)]
    pub(crate) async fn age_intake_key_for_test(&self, key: &str, age: Duration) {
        sqlx::query("UPDATE intake_keys SET created_at = created_at - ?2 WHERE key = ?1")
            .bind(key)
            .bind(i64::try_from(age.as_millis()).unwrap())
            .execute(&self.pool)
            .await
            .unwrap();
    }
}

/// The taken ones among `keys`, read on `conn`.
async fn taken(
    conn: &mut SqliteConnection,
    keys: &[String],
    op: &'static str,
) -> Result<Option<KeysTaken>, StoreError> {
    let mut found = Vec::new();
    let mut first_turn = None;
    for key in keys {
        let turn: Option<String> =
            sqlx::query_scalar("SELECT turn_id FROM intake_keys WHERE key = ?1")
                .bind(key)
                .fetch_optional(&mut *conn)
                .await
                .map_err(StoreError::db(op))?;
        if let Some(turn) = turn {
            first_turn.get_or_insert(turn);
            found.push(key.clone());
        }
    }
    Ok(first_turn.map(|turn_id| KeysTaken {
        keys: found,
        turn_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn temp_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn a_key_is_taken_once_with_its_message_and_a_repeat_stores_nothing() {
        let (_dir, store) = temp_store().await;
        let session = store.create_session("p", "m").await.unwrap();
        let keys = vec!["tg:1:10".to_owned(), "tg:1:11".to_owned()];
        assert_eq!(store.taken_keys(&keys).await.unwrap(), None);
        let first = store
            .append_user_message(session.id, &Message::user_text("hi"), "t1", &keys, None)
            .await
            .unwrap();
        assert!(first.is_ok());
        let again = vec!["tg:1:12".to_owned(), "tg:1:11".to_owned()];
        let refused = store
            .append_user_message(session.id, &Message::user_text("hi"), "t2", &again, None)
            .await
            .unwrap();
        assert_eq!(
            refused,
            Err(KeysTaken {
                keys: vec!["tg:1:11".to_owned()],
                turn_id: "t1".to_owned()
            })
        );
        // Nothing of the refused request was stored: its fresh key is still free.
        let fresh = vec!["tg:1:12".to_owned()];
        assert_eq!(store.taken_keys(&fresh).await.unwrap(), None);
        assert_eq!(store.load_messages(session.id).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn concurrent_requests_with_one_key_store_one_message() {
        let (_dir, store) = temp_store().await;
        let session = store.create_session("p", "m").await.unwrap();
        let keys = vec!["tg:1:20".to_owned()];
        let attempts = (0..8).map(|i| {
            let store = store.clone();
            let keys = keys.clone();
            async move {
                store
                    .append_user_message(
                        session.id,
                        &Message::user_text("hi"),
                        &format!("t{i}"),
                        &keys,
                        None,
                    )
                    .await
                    .unwrap()
            }
        });
        let results = futures::future::join_all(attempts).await;
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
        assert_eq!(store.load_messages(session.id).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn keys_older_than_the_cutoff_are_forgotten_and_newer_ones_still_refuse_a_repeat() {
        let (_dir, store) = temp_store().await;
        let session = store.create_session("p", "m").await.unwrap();
        let old = vec!["tg:1:1".to_owned()];
        let new = vec!["tg:1:2".to_owned()];
        for (keys, turn) in [(&old, "t1"), (&new, "t2")] {
            store
                .append_user_message(session.id, &Message::user_text("hi"), turn, keys, None)
                .await
                .unwrap()
                .unwrap();
        }
        store
            .age_intake_key_for_test(&old[0], Duration::from_secs(8 * 86_400))
            .await;
        let week = Duration::from_secs(7 * 86_400);
        assert_eq!(store.forget_intake_keys_older_than(week).await.unwrap(), 1);
        assert_eq!(store.taken_keys(&old).await.unwrap(), None);
        assert_eq!(
            store.taken_keys(&new).await.unwrap().map(|t| t.turn_id),
            Some("t2".to_owned())
        );
    }
}
