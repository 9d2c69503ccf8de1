//! The `/next` queue: owner messages waiting to run as their own turns, oldest first.

use super::{Store, StoreError, now_millis};

/// A queued message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    pub id: i64,
    pub text: String,
    /// The owner's message its answer replies to.
    pub reply_to: Option<i64>,
}

impl Store {
    /// Queues `text`; returns its place in the queue (1: next).
    pub async fn push_follow_up(
        &self,
        text: &str,
        reply_to: Option<i64>,
    ) -> Result<usize, StoreError> {
        let op = "queue a follow-up";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        sqlx::query("INSERT INTO follow_ups (text, reply_to, created_at) VALUES (?1, ?2, ?3)")
            .bind(text)
            .bind(reply_to)
            .bind(now_millis())
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM follow_ups")
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// The queue, oldest first.
    pub async fn follow_ups(&self) -> Result<Vec<FollowUp>, StoreError> {
        let rows: Vec<(i64, String, Option<i64>)> =
            sqlx::query_as("SELECT id, text, reply_to FROM follow_ups ORDER BY id")
                .fetch_all(&self.pool)
                .await
                .map_err(StoreError::db("read the follow-ups"))?;
        Ok(rows
            .into_iter()
            .map(|(id, text, reply_to)| FollowUp { id, text, reply_to })
            .collect())
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
    use super::Store;

    #[tokio::test]
    async fn the_queue_keeps_its_order_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        assert_eq!(store.push_follow_up("one", Some(7)).await.unwrap(), 1);
        assert_eq!(store.push_follow_up("two", None).await.unwrap(), 2);
        let queue = store.follow_ups().await.unwrap();
        let texts: Vec<_> = queue.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(queue[0].reply_to, Some(7));
        assert!(store.take_follow_up(queue[0].id).await.unwrap());
        assert!(!store.take_follow_up(queue[0].id).await.unwrap());
        assert_eq!(store.push_follow_up("three", None).await.unwrap(), 2);
        assert_eq!(store.clear_follow_ups().await.unwrap(), 2);
        assert!(store.follow_ups().await.unwrap().is_empty());
    }
}
