//! `When` parsing and next fire times, across DST changes and in a zone without them.

use chrono::{DateTime, TimeZone as _, Utc};
use chrono_tz::Tz;

use super::*;

const BERLIN: Tz = chrono_tz::Europe::Berlin;
const NEW_YORK: Tz = chrono_tz::America::New_York;
const SHANGHAI: Tz = chrono_tz::Asia::Shanghai;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// The next `n` fire times of `expr` after `from`, as local `YYYY-MM-DD HH:MM` with the UTC time.
fn fires(expr: &str, from: DateTime<Utc>, tz: Tz, n: usize) -> Vec<String> {
    let when = When::parse(expr, from, tz).unwrap();
    let mut at = from;
    (0..n)
        .map(|_| {
            at = when.next_after(at, tz).unwrap();
            format!("{} ({}Z)", format_local(at, tz), at.format("%H:%M"))
        })
        .collect()
}

#[test]
fn a_delay_is_an_iso8601_duration() {
    let now = utc(2026, 5, 1, 10, 0);
    assert_eq!(
        When::parse("PT20M", now, SHANGHAI),
        Ok(When::At(utc(2026, 5, 1, 10, 20)))
    );
    assert_eq!(
        When::parse("p1dt2h", now, SHANGHAI),
        Ok(When::At(utc(2026, 5, 2, 12, 0)))
    );
    assert_eq!(
        When::parse("PT3S", now, SHANGHAI),
        Ok(When::At(now + chrono::TimeDelta::seconds(3)))
    );
    assert!(matches!(
        When::parse("PT0S", now, SHANGHAI),
        Err(WhenError::Unrecognized(_))
    ));
    assert!(matches!(
        When::parse("P-bogus", now, SHANGHAI),
        Err(WhenError::Unrecognized(_))
    ));
}

#[test]
fn a_local_date_time_is_read_in_the_configured_zone() {
    let now = utc(2026, 5, 1, 0, 0);
    // 09:00 in Shanghai (UTC+8) is 01:00 UTC.
    for text in [
        "2026-05-02 09:00",
        "2026-05-02T09:00",
        "2026-05-02 09:00:00",
    ] {
        assert_eq!(
            When::parse(text, now, SHANGHAI),
            Ok(When::At(utc(2026, 5, 2, 1, 0))),
            "{text}"
        );
    }
    assert_eq!(
        When::parse("2026-05-02T09:00:00+00:00", now, SHANGHAI),
        Ok(When::At(utc(2026, 5, 2, 9, 0)))
    );
    assert_eq!(
        When::parse("2026-04-30 09:00", now, SHANGHAI),
        Err(WhenError::Past("2026-04-30 09:00".into()))
    );
    assert!(matches!(
        When::parse("tomorrow at nine", now, SHANGHAI),
        Err(WhenError::Unrecognized(_))
    ));
}

#[test]
fn a_local_time_in_a_dst_gap_moves_past_it_and_a_repeated_one_takes_the_first() {
    let now = utc(2026, 3, 1, 0, 0);
    // Berlin skips 02:00-03:00 on 2026-03-29: 02:30 becomes 03:30 CEST (01:30 UTC).
    assert_eq!(
        When::parse("2026-03-29 02:30", now, BERLIN),
        Ok(When::At(utc(2026, 3, 29, 1, 30)))
    );
    // 02:30 happens twice on 2026-10-25: the first (CEST, 00:30 UTC).
    assert_eq!(
        When::parse("2026-10-25 02:30", now, BERLIN),
        Ok(When::At(utc(2026, 10, 25, 0, 30)))
    );
}

#[test]
fn cron_expressions_are_checked() {
    let now = utc(2026, 5, 1, 0, 0);
    assert_eq!(
        When::parse(" 0  8 * * 1-5 ", now, SHANGHAI),
        Ok(When::Cron("0 8 * * 1-5".into()))
    );
    assert!(matches!(
        When::parse("61 8 * * *", now, SHANGHAI),
        Err(WhenError::BadCron(..))
    ));
}

#[test]
fn cron_in_shanghai_has_no_dst() {
    // Weekdays at 08:00 in Shanghai = 00:00 UTC; 2026-05-01 is a Friday.
    assert_eq!(
        fires("0 8 * * 1-5", utc(2026, 5, 1, 0, 0), SHANGHAI, 3),
        [
            "2026-05-04 08:00 (00:00Z)",
            "2026-05-05 08:00 (00:00Z)",
            "2026-05-06 08:00 (00:00Z)"
        ]
    );
}

#[test]
fn cron_keeps_local_time_across_berlin_dst_changes() {
    // Daily 09:00: 08:00 UTC in winter, 07:00 UTC from 2026-03-29 on.
    assert_eq!(
        fires("0 9 * * *", utc(2026, 3, 27, 12, 0), BERLIN, 3),
        [
            "2026-03-28 09:00 (08:00Z)",
            "2026-03-29 09:00 (07:00Z)",
            "2026-03-30 09:00 (07:00Z)"
        ]
    );
    // And back on 2026-10-25.
    assert_eq!(
        fires("0 9 * * *", utc(2026, 10, 24, 12, 0), BERLIN, 2),
        ["2026-10-25 09:00 (08:00Z)", "2026-10-26 09:00 (08:00Z)"]
    );
}

#[test]
fn cron_in_a_skipped_hour_fires_after_the_gap_and_once_in_a_repeated_hour() {
    // 02:30 does not exist on 2026-03-29 in Berlin: it fires at 03:00 CEST, once.
    assert_eq!(
        fires("30 2 * * *", utc(2026, 3, 28, 12, 0), BERLIN, 2),
        ["2026-03-29 03:00 (01:00Z)", "2026-03-30 02:30 (00:30Z)"]
    );
    // 02:30 happens twice on 2026-10-25: it fires once, at the first.
    assert_eq!(
        fires("30 2 * * *", utc(2026, 10, 24, 12, 0), BERLIN, 2),
        ["2026-10-25 02:30 (00:30Z)", "2026-10-26 02:30 (01:30Z)"]
    );
}

#[test]
fn cron_across_new_york_dst_changes() {
    // Daily 07:15: 12:15 UTC (EST) until 2026-03-08, then 11:15 UTC (EDT).
    assert_eq!(
        fires("15 7 * * *", utc(2026, 3, 7, 0, 0), NEW_YORK, 2),
        ["2026-03-07 07:15 (12:15Z)", "2026-03-08 07:15 (11:15Z)"]
    );
    // 2026-11-01: back to EST.
    assert_eq!(
        fires("15 7 * * *", utc(2026, 10, 31, 20, 0), NEW_YORK, 2),
        ["2026-11-01 07:15 (12:15Z)", "2026-11-02 07:15 (12:15Z)"]
    );
}

#[test]
fn a_one_shot_has_no_next_fire_once_past() {
    let at = utc(2026, 5, 1, 10, 0);
    let when = When::At(at);
    assert_eq!(
        when.next_after(at - chrono::TimeDelta::seconds(1), SHANGHAI),
        Some(at)
    );
    assert_eq!(when.next_after(at, SHANGHAI), None);
}
