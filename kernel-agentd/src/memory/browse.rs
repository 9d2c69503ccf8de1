//! Browsing memories by source and by local creation date (the web console), a page at a time,
//! newest first; the numbers of the `#n` listing are left alone (every memory's number is 0).

use chrono::{NaiveDate, Utc};

use super::{Memories, MemoryError, MemoryInfo};
use crate::store::{MemoryFilter, MemorySource};

/// Memories per browse page.
pub(crate) const BROWSE_PAGE_SIZE: usize = 50;

/// One page of a browse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrowsePage {
    pub(crate) memories: Vec<MemoryInfo>,
    /// How many memories match.
    pub(crate) total: u64,
    /// The page shown (1-based).
    pub(crate) page: u32,
    /// How many pages there are (0 when nothing matches).
    pub(crate) pages: u32,
}

impl Memories {
    /// Page `page` (1-based; 0 means 1) of the memories from `source` created from local day
    /// `from` through local day `to` (both included; `None`: open); with `set_aside`, the
    /// memories consolidation set aside among them (marked with why).
    pub(crate) async fn browse(
        &self,
        source: Option<MemorySource>,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        page: u32,
        set_aside: bool,
    ) -> Result<BrowsePage, MemoryError> {
        let start = |day: NaiveDate| {
            day.and_hms_opt(0, 0, 0)
                .and_then(|t| t.and_local_timezone(self.tz).earliest())
                .map(|t| t.with_timezone(&Utc))
        };
        let filter = MemoryFilter {
            source,
            since: from.and_then(start),
            until: to.and_then(|d| d.succ_opt()).and_then(start),
            set_aside,
        };
        let page = page.max(1);
        let offset = (page as usize - 1).saturating_mul(BROWSE_PAGE_SIZE);
        let (rows, total) = self
            .store
            .browse_memories(filter, BROWSE_PAGE_SIZE, offset)
            .await?;
        let pages = u32::try_from(total.div_ceil(BROWSE_PAGE_SIZE as u64)).unwrap_or(u32::MAX);
        Ok(BrowsePage {
            memories: rows
                .into_iter()
                .map(|(row, aside)| MemoryInfo {
                    number: 0,
                    id: row.id,
                    date: self.local_date(row.created_at),
                    auto: row.auto,
                    origin: row.origin,
                    text: row.text,
                    set_aside: aside,
                })
                .collect(),
            total,
            page,
            pages,
        })
    }
}
