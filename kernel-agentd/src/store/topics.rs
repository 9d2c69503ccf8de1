//! Telegram topics bound to sessions: a topic (its `message_thread_id`) is one session, stored
//! so that a restart of either process keeps the binding (`topic_sessions`).

use super::{Store, StoreError, now_millis};

impl Store {
    /// Binds topic `thread_id` to session `session_id`, replacing the topic's earlier binding
    /// and the session's earlier topic (`/resume #n` inside a topic moves the session there).
    pub async fn bind_topic(&self, thread_id: i64, session_id: i64) -> Result<(), StoreError> {
        let op = "bind a topic to a session";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        // The topic keeps its name across bindings.
        let name: Option<Option<String>> =
            sqlx::query_scalar("SELECT name FROM topic_sessions WHERE thread_id = ?1")
                .bind(thread_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
        sqlx::query("DELETE FROM topic_sessions WHERE thread_id = ?1 OR session_id = ?2")
            .bind(thread_id)
            .bind(session_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        sqlx::query(
            "INSERT INTO topic_sessions (thread_id, session_id, created_at, name)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(thread_id)
        .bind(session_id)
        .bind(now_millis())
        .bind(name.flatten())
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))
    }

    /// The session topic `thread_id` is bound to, if any.
    pub async fn topic_session(&self, thread_id: i64) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar("SELECT session_id FROM topic_sessions WHERE thread_id = ?1")
            .bind(thread_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("read a topic's session"))
    }

    /// The topic session `session_id` lives in, if any.
    pub async fn session_topic(&self, session_id: i64) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar("SELECT thread_id FROM topic_sessions WHERE session_id = ?1")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("read a session's topic"))
    }

    /// Records topic `thread_id`'s name (from its creation or rename); nothing if unbound.
    pub async fn name_topic(&self, thread_id: i64, name: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE topic_sessions SET name = ?2 WHERE thread_id = ?1")
            .bind(thread_id)
            .bind(name)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("name a topic"))?;
        Ok(())
    }

    /// Topic `thread_id`'s name, if known.
    pub async fn topic_name(&self, thread_id: i64) -> Result<Option<String>, StoreError> {
        let name: Option<Option<String>> =
            sqlx::query_scalar("SELECT name FROM topic_sessions WHERE thread_id = ?1")
                .bind(thread_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::db("read a topic's name"))?;
        Ok(name.flatten())
    }

    /// Every session living in a topic: session id → (thread id, the topic's name if known).
    pub async fn session_topics(
        &self,
    ) -> Result<std::collections::HashMap<i64, (i64, Option<String>)>, StoreError> {
        let rows: Vec<(i64, i64, Option<String>)> =
            sqlx::query_as("SELECT session_id, thread_id, name FROM topic_sessions")
                .fetch_all(&self.pool)
                .await
                .map_err(StoreError::db("read the sessions' topics"))?;
        Ok(rows
            .into_iter()
            .map(|(session, thread, name)| (session, (thread, name)))
            .collect())
    }

    /// Forgets topic `thread_id` (deleted by the owner); whether it was bound.
    pub async fn forget_topic(&self, thread_id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM topic_sessions WHERE thread_id = ?1")
            .bind(thread_id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("forget a topic"))?;
        Ok(done.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_topic_binds_one_session_survives_reopening_and_goes_with_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel.db");
        let store = Store::open(&path).await.unwrap();
        let a = store.create_session("p", "m").await.unwrap().id;
        let b = store.create_session("p", "m").await.unwrap().id;
        assert_eq!(store.topic_session(7).await.unwrap(), None);
        store.bind_topic(7, a).await.unwrap();
        store.bind_topic(8, b).await.unwrap();
        store.close().await;

        let store = Store::open(&path).await.unwrap();
        assert_eq!(store.topic_session(7).await.unwrap(), Some(a));
        assert_eq!(store.session_topic(b).await.unwrap(), Some(8));
        // Resuming session b inside topic 7: b moves there, topic 8 is free, a loses topic 7.
        store.bind_topic(7, b).await.unwrap();
        assert_eq!(store.topic_session(7).await.unwrap(), Some(b));
        assert_eq!(store.topic_session(8).await.unwrap(), None);
        assert_eq!(store.session_topic(a).await.unwrap(), None);
        // A deleted session forgets its topic; a deleted topic forgets its session.
        store.delete_sessions(&[b]).await.unwrap();
        assert_eq!(store.topic_session(7).await.unwrap(), None);
        store.bind_topic(9, a).await.unwrap();
        assert!(store.forget_topic(9).await.unwrap());
        assert!(!store.forget_topic(9).await.unwrap());
        assert_eq!(store.session_topic(a).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_topic_keeps_its_name_across_bindings() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let a = store.create_session("p", "m").await.unwrap().id;
        let b = store.create_session("p", "m").await.unwrap().id;
        store.name_topic(7, "unbound").await.unwrap();
        assert_eq!(store.topic_name(7).await.unwrap(), None);
        store.bind_topic(7, a).await.unwrap();
        assert_eq!(store.topic_name(7).await.unwrap(), None);
        store.name_topic(7, "Alpha").await.unwrap();
        store.name_topic(7, "Alpha 2").await.unwrap();
        store.bind_topic(7, b).await.unwrap();
        assert_eq!(
            store.topic_name(7).await.unwrap().as_deref(),
            Some("Alpha 2")
        );
    }
}
