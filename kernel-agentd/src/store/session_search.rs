//! Finding sessions by a text in their title (the web console's session search; what was said
//! in them is found by the conversation index, `recall`), newest first.

use super::{SessionRow, Store, StoreError, like_escape};

impl Store {
    /// Sessions whose title contains `text` (ASCII case-insensitively), newest first, at most
    /// `limit`.
    pub async fn search_sessions(
        &self,
        text: &str,
        limit: usize,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let pattern = format!("%{}%", like_escape(text));
        let ids: Vec<(i64,)> = sqlx::query_as(
            "SELECT s.id FROM sessions s
             WHERE s.title LIKE ?1 ESCAPE '\\'
             ORDER BY s.updated_at DESC, s.id DESC LIMIT ?2",
        )
        .bind(pattern)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("search sessions"))?;
        let mut rows = Vec::with_capacity(ids.len());
        for (id,) in ids {
            if let Some(row) = self.get_session(id).await? {
                rows.push(row);
            }
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    #[tokio::test]
    async fn finds_sessions_by_title_and_treats_wildcards_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let a = store.create_session("p", "m").await.unwrap().id;
        let b = store.create_session("p", "m").await.unwrap().id;
        store.set_session_title(a, "Trip to Kyoto").await.unwrap();
        store
            .set_session_title(b, "the cat likes 100% tuna")
            .await
            .unwrap();
        store
            .append_messages(b, &[Message::user_text("in a message: kyoto")])
            .await
            .unwrap();
        let ids = |rows: Vec<SessionRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(store.search_sessions("kyoto", 50).await.unwrap()), [a]);
        assert_eq!(ids(store.search_sessions("TUNA", 50).await.unwrap()), [b]);
        assert_eq!(ids(store.search_sessions("100%", 50).await.unwrap()), [b]);
        assert!(store.search_sessions("0%t", 50).await.unwrap().is_empty());
        assert!(
            store
                .search_sessions("nothing", 50)
                .await
                .unwrap()
                .is_empty()
        );
    }
}
