//! Budget periods in the owner's time zone: the day and the month an instant falls in, when
//! they began (local midnight; the first instant of the day when DST skips midnight), and their
//! keys (`day:YYYY-MM-DD`, `month:YYYY-MM`). [`Watermark`] keeps "now" from going backwards, so
//! a clock that jumps back (NTP, a wrong RTC) never starts a period early.

use std::sync::Mutex;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use kernel_proto::words::BudgetPeriod;

/// Daily or monthly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PeriodKind {
    Day,
    Month,
}

impl PeriodKind {
    /// The wire word: `daily` or `monthly`.
    pub fn word(self) -> BudgetPeriod {
        match self {
            PeriodKind::Day => BudgetPeriod::Daily,
            PeriodKind::Month => BudgetPeriod::Monthly,
        }
    }

    /// `"daily"` or `"monthly"` (the config key and the wire value).
    pub fn as_str(self) -> &'static str {
        self.word().as_str()
    }
}

/// The day and the month an instant falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Periods {
    pub day: NaiveDate,
    pub day_start: DateTime<Utc>,
    pub month_start: DateTime<Utc>,
}

impl Periods {
    /// The periods `now` falls in, in `tz`.
    pub fn at(now: DateTime<Utc>, tz: Tz) -> Periods {
        let day = now.with_timezone(&tz).date_naive();
        let first = day.with_day(1).unwrap_or(day);
        Periods {
            day,
            day_start: local_start(day, tz),
            month_start: local_start(first, tz),
        }
    }

    /// When the period of `kind` began.
    pub fn start(&self, kind: PeriodKind) -> DateTime<Utc> {
        match kind {
            PeriodKind::Day => self.day_start,
            PeriodKind::Month => self.month_start,
        }
    }

    /// `day:YYYY-MM-DD` or `month:YYYY-MM`.
    pub fn key(&self, kind: PeriodKind) -> String {
        match kind {
            PeriodKind::Day => format!("day:{}", self.day.format("%Y-%m-%d")),
            PeriodKind::Month => format!("month:{}", self.day.format("%Y-%m")),
        }
    }
}

/// The first instant of `day` in `tz`: local midnight, or — where DST skips midnight — the
/// first local time that exists that day.
fn local_start(day: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
    for minutes in (0..=180).step_by(15) {
        let local = midnight + Duration::minutes(minutes);
        if let Some(t) = tz.from_local_datetime(&local).earliest() {
            return t.with_timezone(&Utc);
        }
    }
    // No zone skips more than three hours; this is only a guard.
    tz.from_utc_datetime(&midnight).with_timezone(&Utc)
}

/// "Now" that never goes backwards: the latest instant seen (from the clock or from the
/// ledger's newest row).
#[derive(Debug)]
pub struct Watermark(Mutex<DateTime<Utc>>);

impl Default for Watermark {
    fn default() -> Self {
        Self(Mutex::new(DateTime::<Utc>::MIN_UTC))
    }
}

impl Watermark {
    /// The latest of `seen` and every instant seen before.
    pub fn advance(&self, seen: DateTime<Utc>) -> DateTime<Utc> {
        let mut latest = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if seen > *latest {
            *latest = seen;
        }
        *latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn day_and_month_begin_at_local_midnight() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        // 2026-11-30 17:00 UTC is 2026-12-01 01:00 in Shanghai.
        let p = Periods::at(utc("2026-11-30T17:00:00Z"), tz);
        assert_eq!(p.key(PeriodKind::Day), "day:2026-12-01");
        assert_eq!(p.key(PeriodKind::Month), "month:2026-12");
        assert_eq!(p.day_start, utc("2026-11-30T16:00:00Z"));
        assert_eq!(p.month_start, utc("2026-11-30T16:00:00Z"));
        let p = Periods::at(utc("2026-11-30T15:59:59Z"), tz);
        assert_eq!(p.key(PeriodKind::Day), "day:2026-11-30");
        assert_eq!(p.month_start, utc("2026-10-31T16:00:00Z"));
    }

    #[test]
    fn dst_days_are_23_and_25_hours_long() {
        let tz: Tz = "America/New_York".parse().unwrap();
        // Spring forward on 2026-03-08: the day is 23 hours long.
        let a = Periods::at(utc("2026-03-08T12:00:00Z"), tz);
        let b = Periods::at(utc("2026-03-09T12:00:00Z"), tz);
        assert_eq!(a.day_start, utc("2026-03-08T05:00:00Z"));
        assert_eq!(b.day_start - a.day_start, Duration::hours(23));
        // Fall back on 2026-11-01: 25 hours.
        let c = Periods::at(utc("2026-11-01T12:00:00Z"), tz);
        let d = Periods::at(utc("2026-11-02T12:00:00Z"), tz);
        assert_eq!(d.day_start - c.day_start, Duration::hours(25));
        assert_eq!(c.month_start, utc("2026-11-01T04:00:00Z"));
    }

    #[test]
    fn a_day_whose_midnight_dst_skips_begins_at_its_first_instant() {
        // Chile moves from 00:00 to 01:00 on the first Sunday of September (2026-09-06).
        let tz: Tz = "America/Santiago".parse().unwrap();
        let p = Periods::at(utc("2026-09-06T18:00:00Z"), tz);
        assert_eq!(p.key(PeriodKind::Day), "day:2026-09-06");
        let local = p.day_start.with_timezone(&tz);
        assert_eq!(local.date_naive(), p.day);
        assert!(p.day_start <= utc("2026-09-06T18:00:00Z"));
        // Whichever rule the zone data has, the start is the first existing local time.
        assert!(*local.format("%H:%M").to_string() <= *"01:00", "{local}");
    }

    #[test]
    fn a_clock_that_jumps_back_never_starts_a_period_early() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let w = Watermark::default();
        let late = utc("2026-11-27T15:30:00Z"); // 23:30 local
        assert_eq!(w.advance(late), late);
        // The clock jumps back a day: "now" stays where it was, so does the day.
        let now = w.advance(utc("2026-11-26T15:30:00Z"));
        assert_eq!(now, late);
        assert_eq!(Periods::at(now, tz).key(PeriodKind::Day), "day:2026-11-27");
        // Forward moves on.
        let next = utc("2026-11-27T16:30:00Z");
        assert_eq!(
            Periods::at(w.advance(next), tz).key(PeriodKind::Day),
            "day:2026-11-28"
        );
    }
}
