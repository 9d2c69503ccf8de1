//! The time range of a conversation search: `after` / `before` as local dates (`2026-03-01`,
//! whole days, both inclusive) or date-times (`2026-03-01 14:30`, `2026-03-01T14:30:00`, or
//! RFC 3339 with an offset) in the owner's zone (`general.timezone`), as unix-ms bounds
//! `[from, to)`.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;

/// `[from_ms, to_ms)`; an open end is `i64::MIN` / `i64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub from_ms: i64,
    pub to_ms: i64,
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange {
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        }
    }
}

/// Why a range was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error(
        "{key} must be a date like 2026-03-01 or a date-time like 2026-03-01 14:30, not {value:?}"
    )]
    Unreadable { key: &'static str, value: String },
    #[error("the range is the wrong way round: after is not before before")]
    Reversed,
}

impl TimeRange {
    /// The range `after..before` in `tz`: a date as `after` starts at its first instant, a
    /// date as `before` ends after its last (so `after = before = a date` is that day). Empty
    /// strings are open ends.
    pub fn parse(
        after: Option<&str>,
        before: Option<&str>,
        tz: Tz,
    ) -> Result<TimeRange, RangeError> {
        let after = after.map(str::trim).filter(|s| !s.is_empty());
        let before = before.map(str::trim).filter(|s| !s.is_empty());
        let from_ms = match after {
            Some(a) => parse_instant(a, tz, false).ok_or_else(|| RangeError::Unreadable {
                key: "after",
                value: kernel_common::text::head(a, 40).to_owned(),
            })?,
            None => i64::MIN,
        };
        let to_ms = match before {
            Some(b) => parse_instant(b, tz, true).ok_or_else(|| RangeError::Unreadable {
                key: "before",
                value: kernel_common::text::head(b, 40).to_owned(),
            })?,
            None => i64::MAX,
        };
        if from_ms >= to_ms {
            return Err(RangeError::Reversed);
        }
        Ok(TimeRange { from_ms, to_ms })
    }

    /// Whether neither end is set.
    pub fn is_open(&self) -> bool {
        *self == TimeRange::default()
    }
}

/// `text` as unix ms: a date-time (local unless it has an offset), or a date's first instant
/// (`end_of_day`: the first instant of the next day).
fn parse_instant(text: &str, tz: Tz, end_of_day: bool) -> Option<i64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis());
    }
    for format in [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return local(t, tz);
        }
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    let date = if end_of_day { date.succ_opt()? } else { date };
    local(date.and_hms_opt(0, 0, 0)?, tz)
}

/// A local time as unix ms (the earliest if ambiguous; an hour later if it falls in a gap).
fn local(t: NaiveDateTime, tz: Tz) -> Option<i64> {
    tz.from_local_datetime(&t)
        .earliest()
        .or_else(|| {
            tz.from_local_datetime(&(t + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_whole_local_days_and_date_times_are_instants() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let day = TimeRange::parse(Some("2026-03-01"), Some("2026-03-01"), tz).unwrap();
        assert_eq!(day.from_ms, 1_772_294_400_000);
        assert_eq!(day.to_ms, 1_772_294_400_000 + 86_400_000);
        let t = TimeRange::parse(Some("2026-03-01 08:30"), None, tz).unwrap();
        assert_eq!(t.from_ms, 1_772_294_400_000 + 8 * 3_600_000 + 30 * 60_000);
        assert_eq!(t.to_ms, i64::MAX);
        let z = TimeRange::parse(None, Some("2026-03-01T00:00:00Z"), tz).unwrap();
        assert_eq!(z.to_ms, 1_772_323_200_000);
        assert!(TimeRange::parse(Some(""), None, tz).unwrap().is_open());
    }

    #[test]
    fn bad_and_reversed_ranges_are_refused() {
        let tz = Tz::UTC;
        assert_eq!(
            TimeRange::parse(Some("2026-03-02"), Some("2026-03-01"), tz),
            Err(RangeError::Reversed)
        );
        let bad = TimeRange::parse(Some("last tuesday"), None, tz).unwrap_err();
        assert!(bad.to_string().contains("after"), "{bad}");
        assert!(TimeRange::parse(None, Some("2026-13-40"), tz).is_err());
    }
}
