//! Browsing memories (the web console): one memory by id, and a page of memories filtered by
//! source (the owner's, auto memory from the owner's words, auto memory from outside content)
//! and by a creation-time range, newest first, with how many match; the memories consolidation
//! set aside only on request, with why.

use chrono::{DateTime, Utc};

use super::consolidation::SetAside;
use super::memory::MemoryRow;
use super::{Store, StoreError, from_millis};

/// Where memories came from, for a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySource {
    /// Added by the owner (`/remember`, the console, the model at the owner's word).
    Owner,
    /// Added by auto memory from the owner's own words.
    Auto,
    /// Added by auto memory from outside content (`origin` set).
    Outside,
}

/// A browse filter; `None` fields do not filter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryFilter {
    pub source: Option<MemorySource>,
    /// Created at or after.
    pub since: Option<DateTime<Utc>>,
    /// Created before.
    pub until: Option<DateTime<Utc>>,
    /// Also the memories consolidation set aside (otherwise never listed).
    pub set_aside: bool,
}

type Raw = (i64, String, i64, bool, Option<String>);

/// A browsed row: the memory columns, then the set-aside reason and `by_id`.
type BrowseRaw = (
    i64,
    String,
    i64,
    bool,
    Option<String>,
    Option<String>,
    Option<i64>,
);

fn row(r: Raw) -> Result<MemoryRow, StoreError> {
    let (id, text, created_at, auto, origin) = r;
    Ok(MemoryRow {
        id,
        created_at: from_millis(created_at, || format!("memory {id}"))?,
        text,
        auto,
        origin,
    })
}

/// `$head`, the filter's WHERE clause over `?1` (source: 0 any, 1 owner, 2 auto, 3 outside),
/// `?2` (since, ms) and `?3` (until, ms), then `$tail`: one static SQL string.
macro_rules! filtered {
    ($head:literal, $tail:literal) => {
        concat!(
            $head,
            " WHERE (?1 = 0 OR (?1 = 1 AND source <> 'auto')
                 OR (?1 = 2 AND source = 'auto' AND origin IS NULL)
                 OR (?1 = 3 AND origin IS NOT NULL))
             AND created_at >= ?2 AND created_at < ?3 ",
            $tail
        )
    };
}

impl Store {
    /// The memory `id`, if it exists.
    pub async fn memory_by_id(&self, id: i64) -> Result<Option<MemoryRow>, StoreError> {
        let raw: Option<Raw> = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto', origin FROM memories WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read a memory"))?;
        raw.map(row).transpose()
    }

    /// The memories matching `filter`, newest first, `limit` from `offset`, and how many match;
    /// each with why it is set aside when `filter.set_aside` lists those too.
    pub async fn browse_memories(
        &self,
        filter: MemoryFilter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<(MemoryRow, Option<SetAside>)>, u64), StoreError> {
        let source = match filter.source {
            None => 0,
            Some(MemorySource::Owner) => 1,
            Some(MemorySource::Auto) => 2,
            Some(MemorySource::Outside) => 3,
        };
        let since = filter.since.map_or(i64::MIN, |t| t.timestamp_millis());
        let until = filter.until.map_or(i64::MAX, |t| t.timestamp_millis());
        let n = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        let raws: Vec<BrowseRaw> = sqlx::query_as(filtered!(
            "SELECT id, text, created_at, source = 'auto', origin, reason, by_id FROM
             (SELECT id, text, created_at, source, origin, NULL AS reason, NULL AS by_id
              FROM memories
              UNION ALL
              SELECT id, text, created_at, source, origin, reason, by_id
              FROM memories_set_aside WHERE ?6)",
            "ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
        ))
        .bind(source)
        .bind(since)
        .bind(until)
        .bind(n(limit))
        .bind(n(offset))
        .bind(filter.set_aside)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("browse memories"))?;
        let (total,): (i64,) = sqlx::query_as(filtered!(
            "SELECT COUNT(*) FROM
             (SELECT created_at, source, origin FROM memories
              UNION ALL
              SELECT created_at, source, origin FROM memories_set_aside WHERE ?4)",
            ""
        ))
        .bind(source)
        .bind(since)
        .bind(until)
        .bind(filter.set_aside)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("count memories"))?;
        let rows = raws
            .into_iter()
            .map(|(id, text, created_at, auto, origin, reason, by)| {
                let row = row((id, text, created_at, auto, origin))?;
                Ok((row, reason.map(|reason| SetAside { reason, by })))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((rows, u64::try_from(total).unwrap_or(0)))
    }
}
