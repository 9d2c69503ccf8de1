//! Kept searches: a search `SearchHistory` was asked to keep (`/history <words>`, whose page
//! buttons name it by number) is stored as JSON (`store::history_searches`) and run again by
//! that number, after any restart.

use serde::{Deserialize, Serialize};

use super::{History, HistoryError, HistoryQuery};

/// A search as kept: what [`HistoryQuery`] borrows, owned (the limit is the caller's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptSearch {
    pub query: String,
    #[serde(default)]
    pub after: String,
    #[serde(default)]
    pub before: String,
}

impl KeptSearch {
    /// The search, with at most `limit` hits.
    pub fn as_query(&self, limit: usize) -> HistoryQuery<'_> {
        HistoryQuery {
            query: &self.query,
            after: Some(&self.after),
            before: Some(&self.before),
            limit,
        }
    }
}

impl History {
    /// Keeps `search`; its number.
    pub async fn keep(&self, search: &KeptSearch) -> Result<i64, HistoryError> {
        let json = serde_json::to_string(search).expect("a search serializes");
        Ok(self.inner.store.keep_history_search(&json).await?)
    }

    /// The search kept as `id`, if it still is (an unreadable one is gone too).
    pub async fn kept(&self, id: i64) -> Result<Option<KeptSearch>, HistoryError> {
        let json = self.inner.store.kept_history_search(id).await?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }
}
