//! The agent's memory operations for the RPCs: add, the `#n` listing and its mapping to ids
//! (like `sessions.rs` does for sessions), search, and delete by `#n`.
//!
//! A number always means what the latest listing showed, even after deletions; malformed or
//! out-of-range numbers are refused before anything is deleted.

use std::sync::Arc;

use super::{Memories, MemoryRow, SearchMode};
use crate::agent::Agent;
use crate::error::ApiError;

/// How many memories a listing shows (newest first).
pub const LISTING_LIMIT: usize = super::MAX_LIST_LIMIT;

/// A memory as shown to the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryInfo {
    /// `#n` in the latest listing; 0 for search results.
    pub number: u32,
    pub id: i64,
    pub text: String,
    /// `YYYY-MM-DD` in the configured time zone.
    pub date: String,
}

impl Agent {
    /// The long-term memory.
    pub fn memories(&self) -> &Arc<Memories> {
        &self.inner.memory
    }

    fn memory_info(&self, row: MemoryRow, number: u32) -> MemoryInfo {
        MemoryInfo {
            number,
            id: row.id,
            date: self.memories().local_date(row.created_at),
            text: row.text,
        }
    }

    /// Remembers `text` (no model call); its id.
    pub async fn add_memory(&self, text: &str) -> Result<i64, ApiError> {
        Ok(self.memories().add(text).await?.id)
    }

    /// Memories newest first, numbered `#1..`; becomes the mapping for `#n` references.
    pub async fn list_memories(&self) -> Result<Vec<MemoryInfo>, ApiError> {
        let rows = self.memories().list(LISTING_LIMIT).await?;
        *self.listing() = rows.iter().map(|r| r.id).collect();
        Ok(rows
            .into_iter()
            .zip(1..)
            .map(|(r, n)| self.memory_info(r, n))
            .collect())
    }

    /// How many memories there are (a listing shows at most [`LISTING_LIMIT`]).
    pub async fn memory_count(&self) -> Result<u64, ApiError> {
        Ok(self.memories().count().await?)
    }

    /// Memories matching `query`, best first; `limit` 0 means the default, others are clamped.
    pub async fn search_memories(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<(Vec<MemoryInfo>, SearchMode), ApiError> {
        let limit = match limit {
            0 => super::DEFAULT_SEARCH_LIMIT,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let found = self.memories().search(query, limit).await?;
        let list = found
            .memories
            .into_iter()
            .map(|r| self.memory_info(r, 0))
            .collect();
        Ok((list, found.mode))
    }

    /// Deletes memories by `#n` of the latest listing; every number is checked before anything
    /// is deleted. How many were deleted (a memory deleted meanwhile is not counted).
    pub async fn delete_memories(&self, numbers: &[u32]) -> Result<u64, ApiError> {
        if numbers.is_empty() {
            return Err(ApiError::InvalidArgument(
                "name at least one memory: #n".into(),
            ));
        }
        let mut ids = {
            let listing = self.listing();
            numbers
                .iter()
                .map(|&n| resolve(&listing, n))
                .collect::<Result<Vec<_>, _>>()?
        };
        ids.sort_unstable();
        ids.dedup();
        Ok(self.memories().delete(&ids).await?)
    }

    fn listing(&self) -> std::sync::MutexGuard<'_, Vec<i64>> {
        self.memories()
            .listing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// The memory id behind `#number` of `listing`.
fn resolve(listing: &[i64], number: u32) -> Result<i64, ApiError> {
    if listing.is_empty() {
        return Err(ApiError::FailedPrecondition(
            "list the memories first (/memory)".into(),
        ));
    }
    (number as usize)
        .checked_sub(1)
        .and_then(|i| listing.get(i).copied())
        .ok_or_else(|| {
            ApiError::InvalidArgument(format!(
                "#{number} is not in the latest listing (#1..#{})",
                listing.len()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_map_to_the_listing() {
        let listing = [30, 20, 10];
        assert_eq!(resolve(&listing, 1).unwrap(), 30);
        assert_eq!(resolve(&listing, 3).unwrap(), 10);
        assert!(matches!(
            resolve(&listing, 0),
            Err(ApiError::InvalidArgument(_))
        ));
        assert!(matches!(
            resolve(&listing, 4),
            Err(ApiError::InvalidArgument(_))
        ));
        assert!(matches!(
            resolve(&[], 1),
            Err(ApiError::FailedPrecondition(_))
        ));
    }
}
