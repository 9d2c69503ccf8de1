//! Hybrid search: lexical candidates (FTS5/LIKE, [`Memories::find_lexical`]) and vector
//! candidates ([`Semantic`]) fused by weighted reciprocal rank ([`fusion`], the ranking of
//! conversation recall too), optionally within a date range ([`DateRange`], local dates in
//! `general.timezone`). Without `[embeddings]`, or when the query's vector does not come in time,
//! the search is exactly the lexical one. An exact lexical hit ([`ExactWords`]: every query term,
//! a quoted phrase, a number or a name) ranks above every other, and a vector-only hit below
//! `embeddings.min_similarity` is dropped.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{NaiveDate, TimeZone};

use super::exact::ExactWords;
use super::fusion;
use super::segment;
use super::semantic::Semantic;
use super::{Found, Memories, MemoryError, MemoryRow, SearchMode};

/// How long `memory_search` / `SearchMemories` wait for the query's vector before answering
/// lexically.
pub const SEARCH_EMBED_BUDGET: Duration = Duration::from_secs(3);
/// Candidates taken from each side (at least; more when the limit is larger).
const MIN_CANDIDATES: usize = 20;
/// Most lexical candidates read for a date-filtered search.
const FILTERED_CANDIDATES: usize = 200;

/// A range of local dates (both ends inclusive, either open), as unix-ms bounds `[from, to)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateRange {
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
}

impl DateRange {
    /// `since..=until` (local dates `YYYY-MM-DD` in `tz`); an error names the bad one.
    pub fn local(
        since: Option<&str>,
        until: Option<&str>,
        tz: chrono_tz::Tz,
    ) -> Result<DateRange, String> {
        let start_of = |text: &str, key: &str| -> Result<i64, String> {
            let date = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
                .map_err(|_| format!("{key} must be a date like 2026-03-01, not {text:?}"))?;
            Ok(day_start(date, tz))
        };
        let from_ms = since.map(|s| start_of(s, "since")).transpose()?;
        let to_ms = until
            .map(|u| {
                start_of(u, "until").map(|_| {
                    let date = NaiveDate::parse_from_str(u.trim(), "%Y-%m-%d").unwrap_or_default();
                    day_start(date.succ_opt().unwrap_or(date), tz)
                })
            })
            .transpose()?;
        Ok(DateRange { from_ms, to_ms })
    }

    /// Whether neither end is set.
    pub fn is_open(&self) -> bool {
        self.from_ms.is_none() && self.to_ms.is_none()
    }

    fn contains(&self, row: &MemoryRow) -> bool {
        let at = row.created_at.timestamp_millis();
        self.from_ms.is_none_or(|f| at >= f) && self.to_ms.is_none_or(|t| at < t)
    }
}

/// The first instant of `date` in `tz`, unix ms (the earliest, if the day starts in a gap).
fn day_start(date: NaiveDate, tz: chrono_tz::Tz) -> i64 {
    let midnight = date.and_hms_opt(0, 0, 0).unwrap_or_default();
    match tz.from_local_datetime(&midnight).earliest() {
        Some(t) => t.timestamp_millis(),
        None => tz
            .from_local_datetime(&(midnight + chrono::Duration::hours(1)))
            .earliest()
            .map_or(midnight.and_utc().timestamp_millis(), |t| {
                t.timestamp_millis()
            }),
    }
}

/// The `k` memories nearest `vector` within `range`, scanned on a blocking thread (at 100k
/// vectors the scan takes milliseconds, too long for a runtime worker).
async fn nearest(
    semantic: &Semantic,
    vector: Vec<f32>,
    k: usize,
    range: DateRange,
) -> Vec<(i64, f32)> {
    let semantic = semantic.clone();
    let scan = move || semantic.nearest(&vector, k, range.from_ms, range.to_ms);
    match tokio::task::spawn_blocking(scan).await {
        Ok(near) => near,
        Err(e) => {
            tracing::warn!(error = %e, "the vector scan failed; this search is lexical");
            Vec::new()
        }
    }
}

impl Memories {
    /// Uses `semantic` for every later search (once; a second call is ignored).
    pub fn attach_semantic(&self, semantic: Semantic) {
        let _ = self.semantic.set(semantic);
    }

    /// The time zone of dates (`general.timezone`).
    pub fn timezone(&self) -> chrono_tz::Tz {
        self.tz
    }

    /// The embeddings side, when `[embeddings]` is configured.
    pub fn semantic(&self) -> Option<&Semantic> {
        self.semantic.get()
    }

    /// Up to `limit` memories for `query` (≥ 1, not clamped) created within `range`: hybrid when
    /// embeddings are configured and the query's vector comes within `budget`, else lexical.
    pub(super) async fn find_hybrid(
        &self,
        query: &str,
        limit: usize,
        range: DateRange,
        budget: Duration,
    ) -> Result<Found, MemoryError> {
        let semantic = self.semantic.get().filter(|s| s.has_vectors());
        let candidates = match (semantic.is_some(), range.is_open()) {
            (false, true) => limit,
            (true, true) => limit.max(MIN_CANDIDATES),
            (_, false) => FILTERED_CANDIDATES.max(limit),
        };
        let Some(semantic) = semantic else {
            let (mut lexical, _) = self.find_lexical(query, candidates).await?;
            lexical.memories.retain(|m| range.contains(m));
            lexical.memories.truncate(limit);
            return Ok(lexical);
        };
        // The lexical search runs while the query is embedded and the vectors are scanned.
        let k = limit.max(MIN_CANDIDATES);
        let by_meaning = async {
            let vector = semantic.query_vector(query, budget).await?;
            Ok::<_, super::embeddings::EmbedError>(nearest(semantic, vector, k, range).await)
        };
        let (lexical, near) = tokio::join!(self.find_lexical(query, candidates), by_meaning);
        let (mut lexical, strong) = lexical?;
        lexical.memories.retain(|m| range.contains(m));
        let near = match near {
            Ok(near) => near,
            Err(e) => {
                tracing::warn!(error = %e, "query embedding failed or too slow; this search is lexical");
                lexical.memories.truncate(limit);
                return Ok(lexical);
            }
        };
        self.fuse_with(query, lexical, strong, &near, limit).await
    }

    /// The hybrid search for a query whose normalised `vector` is already known (benchmarks
    /// measure search without the embedding call): `None` without `[embeddings]`.
    #[cfg(any(test, feature = "test-support"))]
    pub async fn search_with_vector(
        &self,
        query: &str,
        vector: &[f32],
        limit: usize,
    ) -> Result<Option<Found>, MemoryError> {
        let Some(semantic) = self.semantic.get() else {
            return Ok(None);
        };
        let limit = limit.clamp(1, super::MAX_SEARCH_LIMIT);
        let k = limit.max(MIN_CANDIDATES);
        let (lexical, near) = tokio::join!(
            self.find_lexical(query, k),
            nearest(semantic, vector.to_vec(), k, DateRange::default())
        );
        let (lexical, strong) = lexical?;
        Ok(Some(
            self.fuse_with(query, lexical, strong, &near, limit).await?,
        ))
    }

    /// Fuses `lexical` (already date-filtered) with the vector candidates `near`.
    async fn fuse_with(
        &self,
        query: &str,
        lexical: Found,
        strong: bool,
        near: &[(i64, f32)],
        limit: usize,
    ) -> Result<Found, MemoryError> {
        let words = ExactWords::new(query, &segment::query_terms(query));
        let lexical_hits: Vec<(i64, bool)> = lexical
            .memories
            .iter()
            .map(|m| (m.id, strong || words.matches(&m.text)))
            .collect();
        let floor = self.semantic.get().map_or(0.0, Semantic::min_similarity);
        let ids = fusion::fuse(&lexical_hits, near, floor, &fusion::SHIPPED, limit);
        let mut known: HashMap<i64, MemoryRow> =
            lexical.memories.into_iter().map(|m| (m.id, m)).collect();
        let missing: Vec<i64> = ids
            .iter()
            .filter(|id| !known.contains_key(id))
            .copied()
            .collect();
        for row in self.store.memories_by_id(&missing).await? {
            known.insert(row.id, row);
        }
        Ok(Found {
            memories: ids.iter().filter_map(|id| known.remove(id)).collect(),
            mode: SearchMode::Hybrid,
        })
    }

    /// Like [`Memories::search`], within `range`.
    pub async fn search_between(
        &self,
        query: &str,
        limit: usize,
        range: DateRange,
    ) -> Result<Found, MemoryError> {
        if query.trim().is_empty() {
            return Err(MemoryError::EmptyQuery);
        }
        self.find_hybrid(
            query,
            limit.clamp(1, super::MAX_SEARCH_LIMIT),
            range,
            SEARCH_EMBED_BUDGET,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_date_ranges() {
        let tz: chrono_tz::Tz = "Asia/Shanghai".parse().unwrap();
        let r = DateRange::local(Some("2026-03-01"), Some("2026-03-01"), tz).unwrap();
        // 2026-03-01T00:00+08:00 = 2026-02-28T16:00Z.
        assert_eq!(r.from_ms, Some(1_772_294_400_000));
        assert_eq!(r.to_ms, Some(1_772_294_400_000 + 86_400_000));
        assert!(
            DateRange::local(Some("March"), None, tz)
                .unwrap_err()
                .contains("since")
        );
        assert!(DateRange::local(None, None, tz).unwrap().is_open());
    }
}
