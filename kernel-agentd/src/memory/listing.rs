//! The memory operations behind the RPCs: the `#n` listing (a [`Listing`], like the sessions'),
//! search results as shown to the owner, and delete by `#n`.
//!
//! A number always means what the latest listing showed, even after deletions; malformed or
//! out-of-range numbers are refused before anything is deleted.

use super::{DEFAULT_SEARCH_LIMIT, MAX_LIST_LIMIT, Memories, MemoryRow, SearchMode};
use crate::error::ApiError;

/// How many memories a listing shows (newest first).
pub const LISTING_LIMIT: usize = MAX_LIST_LIMIT;

/// A memory as shown to the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryInfo {
    /// `#n` in the latest listing; 0 for search results.
    pub number: u32,
    pub id: i64,
    pub text: String,
    /// `YYYY-MM-DD` in the configured time zone.
    pub date: String,
    /// Added by auto memory.
    pub auto: bool,
}

impl Memories {
    fn info(&self, row: MemoryRow, number: u32) -> MemoryInfo {
        MemoryInfo {
            number,
            id: row.id,
            date: self.local_date(row.created_at),
            auto: row.auto,
            text: row.text,
        }
    }

    /// Memories newest first, numbered `#1..`; becomes the mapping for `#n` references.
    pub async fn list_numbered(&self) -> Result<Vec<MemoryInfo>, ApiError> {
        let rows = self.list(LISTING_LIMIT).await?;
        self.listing.set(rows.iter().map(|r| r.id).collect());
        Ok(rows
            .into_iter()
            .zip(1..)
            .map(|(r, n)| self.info(r, n))
            .collect())
    }

    /// Memories matching `query`, best first; `limit` 0 means the default, others are clamped.
    pub async fn search_info(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<(Vec<MemoryInfo>, SearchMode), ApiError> {
        let limit = match limit {
            0 => DEFAULT_SEARCH_LIMIT,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let found = self.search(query, limit).await?;
        let list = found
            .memories
            .into_iter()
            .map(|r| self.info(r, 0))
            .collect();
        Ok((list, found.mode))
    }

    /// Deletes memories by `#n` of the latest listing; every number is checked before anything
    /// is deleted. How many were deleted (a memory deleted meanwhile is not counted).
    pub async fn delete_numbered(&self, numbers: &[u32]) -> Result<u64, ApiError> {
        let ids = self.listing.resolve_all(numbers)?;
        Ok(self.delete(&ids).await?)
    }
}
