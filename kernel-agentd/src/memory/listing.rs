//! The memory operations behind the RPCs: the `#n` listing (a [`Listing`], like the sessions'),
//! the paged listing ([`PAGE_SIZE`] a page, numbered by position, every page shown joining the
//! mapping), search results as shown to the owner (numbered when the owner searched), and delete
//! by `#n`.
//!
//! A number always means what the latest listing showed, even after deletions; malformed or
//! out-of-range numbers are refused before anything is deleted.

use super::{DEFAULT_SEARCH_LIMIT, MAX_LIST_LIMIT, Memories, MemoryError, MemoryRow, SearchMode};
use crate::error::ApiError;
use crate::store::consolidation::SetAside;

/// How many memories a listing shows (newest first).
pub const LISTING_LIMIT: usize = MAX_LIST_LIMIT;

/// Memories a page of `/memory` shows.
pub const PAGE_SIZE: usize = 20;

/// One page of the paged listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPage {
    /// Numbered by position in the whole listing.
    pub memories: Vec<MemoryInfo>,
    /// Memories in all.
    pub total: u64,
    /// The page shown (1-based).
    pub page: u32,
    /// Pages in all (0 without memories).
    pub pages: u32,
}

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
    /// Where an automatic memory came from when not from the owner (`tool <name>`).
    pub origin: Option<String>,
    /// Set aside by memory consolidation (listed only on request), and why.
    pub set_aside: Option<SetAside>,
}

impl Memories {
    fn info(&self, row: MemoryRow, number: u32) -> MemoryInfo {
        MemoryInfo {
            number,
            id: row.id,
            date: self.local_date(row.created_at),
            auto: row.auto,
            origin: row.origin,
            text: row.text,
            set_aside: None,
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

    /// Page `page` (1-based; 0 means 1) of all memories newest first, [`PAGE_SIZE`] a page,
    /// numbered by position (`#21..#40` on page 2); its numbers join the mapping for `#n`
    /// (page 1 starts it over), so `/forget #n` works for any page shown. Also how many
    /// memories and pages there are; a page past the last is empty. With `set_aside`, the
    /// memories consolidation set aside are listed (and counted) among the others.
    pub async fn list_page(&self, page: u32, set_aside: bool) -> Result<MemoryPage, ApiError> {
        let page = page.max(1);
        let mut total = self.count().await?;
        if set_aside {
            total += self
                .store
                .count_set_aside()
                .await
                .map_err(MemoryError::from)?;
        }
        let pages = u32::try_from(total.div_ceil(PAGE_SIZE as u64)).unwrap_or(u32::MAX);
        let offset = (page as usize - 1).saturating_mul(PAGE_SIZE);
        let rows: Vec<(MemoryRow, Option<SetAside>)> = if page > pages {
            Vec::new()
        } else if set_aside {
            self.store
                .memories_page_with_set_aside(offset, PAGE_SIZE)
                .await
                .map_err(MemoryError::from)?
        } else {
            let rows = self
                .store
                .memories_page(offset, PAGE_SIZE)
                .await
                .map_err(MemoryError::from)?;
            rows.into_iter().map(|r| (r, None)).collect()
        };
        let first = u32::try_from(offset + 1).unwrap_or(u32::MAX);
        if !rows.is_empty() {
            let ids: Vec<i64> = rows.iter().map(|(r, _)| r.id).collect();
            self.listing.set_page(first, &ids);
        }
        let memories = rows
            .into_iter()
            .zip(first..)
            .map(|((r, aside), n)| MemoryInfo {
                set_aside: aside,
                ..self.info(r, n)
            })
            .collect();
        Ok(MemoryPage {
            memories,
            total,
            page,
            pages,
        })
    }

    /// Memories matching `query` best first, numbered `#1..` as the new mapping for `#n` (the
    /// owner's `/memory <words>`); `limit` as in [`Memories::search_info`].
    pub async fn search_numbered(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<(Vec<MemoryInfo>, SearchMode), ApiError> {
        let (mut list, mode) = self.search_info(query, limit).await?;
        self.listing.set(list.iter().map(|m| m.id).collect());
        for (m, n) in list.iter_mut().zip(1..) {
            m.number = n;
        }
        Ok((list, mode))
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
