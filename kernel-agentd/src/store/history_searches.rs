//! Kept conversation searches: `/history <words>`' page buttons name a search by a number, and
//! the search itself (its JSON, `recall::kept`) lives in `settings` under
//! `history_search:<n>`, so a press works after either binary restarts. The latest
//! [`KEPT_SEARCHES`] are kept.

use super::{Store, StoreError};

/// How many searches are kept (older ones are dropped when one is added).
pub(super) const KEPT_SEARCHES: i64 = 50;

impl Store {
    /// Keeps `search` under the next number and returns the number.
    pub async fn keep_history_search(&self, search: &str) -> Result<i64, StoreError> {
        let op = "keep a conversation search";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let id: i64 = sqlx::query_scalar(
            "SELECT COALESCE(MAX(CAST(substr(key, 16) AS INTEGER)), 0) + 1
             FROM settings WHERE key LIKE 'history_search:%'",
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        sqlx::query("INSERT INTO settings (key, value) VALUES ('history_search:' || ?1, ?2)")
            .bind(id)
            .bind(search)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        sqlx::query(
            "DELETE FROM settings WHERE key LIKE 'history_search:%'
             AND CAST(substr(key, 16) AS INTEGER) <= ?1",
        )
        .bind(id - KEPT_SEARCHES)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(id)
    }

    /// The search kept under `id`, if it still is.
    pub async fn kept_history_search(&self, id: i64) -> Result<Option<String>, StoreError> {
        self.get_setting(&format!("history_search:{id}")).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn searches_are_numbered_and_the_oldest_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let first = store.keep_history_search("a").await.unwrap();
        assert_eq!(first, 1);
        assert_eq!(store.keep_history_search("b").await.unwrap(), 2);
        assert_eq!(
            store.kept_history_search(1).await.unwrap().as_deref(),
            Some("a")
        );
        for n in 0..KEPT_SEARCHES {
            store.keep_history_search(&n.to_string()).await.unwrap();
        }
        assert_eq!(store.kept_history_search(1).await.unwrap(), None);
        assert_eq!(store.kept_history_search(2).await.unwrap(), None);
        let last = 2 + KEPT_SEARCHES;
        assert!(store.kept_history_search(last).await.unwrap().is_some());
        assert!(
            store
                .kept_history_search(last - KEPT_SEARCHES + 1)
                .await
                .unwrap()
                .is_some()
        );
        assert_eq!(store.kept_history_search(last + 1).await.unwrap(), None);
    }
}
