//! `When`: what a schedule's `when` says — a local date-time, a delay (an ISO 8601 duration)
//! or a 5-field cron expression — always read in `general.timezone`, and its next fire time.
//! Cron expressions are evaluated by `croner` on zoned times (chrono-tz), so DST changes are
//! handled by the crate, not here; durations are parsed by `iso8601`.

use std::str::FromStr as _;

use chrono::{DateTime, LocalResult, NaiveDateTime, TimeZone as _, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// A parsed `when`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum When {
    /// Once, at this instant.
    At(DateTime<Utc>),
    /// Recurring: a 5-field cron expression in the configured time zone.
    Cron(String),
}

/// Why a `when` was not understood (English: the model reads it and asks again).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    #[error(
        "cannot read when {0:?}: give a local date-time (2026-03-01 09:00), a delay as an ISO 8601 duration (PT20M, P1DT2H) or a 5-field cron expression (0 8 * * 1-5)"
    )]
    Unrecognized(String),
    #[error("invalid cron expression {0:?}: {1}")]
    BadCron(String, String),
    #[error("the time {0} is in the past")]
    Past(String),
    #[error("the cron expression {0:?} never fires")]
    Never(String),
}

/// Local date-time formats accepted (seconds optional, `T` or a space).
const LOCAL_FORMATS: [&str; 4] = [
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%dT%H:%M:%S",
];

impl When {
    /// Reads `input` at `now` in `tz`; a one-shot must not be in the past.
    pub(crate) fn parse(input: &str, now: DateTime<Utc>, tz: Tz) -> Result<When, WhenError> {
        let text = input.trim();
        if text.starts_with(['P', 'p']) {
            let duration = iso8601::duration(&text.to_ascii_uppercase())
                .map_err(|_| WhenError::Unrecognized(text.to_owned()))?;
            let delay = std::time::Duration::from(duration);
            let delay = chrono::TimeDelta::from_std(delay)
                .map_err(|_| WhenError::Unrecognized(text.to_owned()))?;
            if delay <= chrono::TimeDelta::zero() {
                return Err(WhenError::Unrecognized(text.to_owned()));
            }
            return Ok(When::At(now + delay));
        }
        if looks_like_cron(text) {
            let cron = parse_cron(text)?;
            if next_cron(&cron, now, tz).is_none() {
                return Err(WhenError::Never(text.to_owned()));
            }
            return Ok(When::Cron(
                text.split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        }
        if let Ok(at) = DateTime::parse_from_rfc3339(text) {
            return future(at.with_timezone(&Utc), now, tz);
        }
        for format in LOCAL_FORMATS {
            if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
                return future(local_instant(local, tz), now, tz);
            }
        }
        Err(WhenError::Unrecognized(text.to_owned()))
    }

    /// The first fire time strictly after `after` (`None`: a one-shot already past, or a cron
    /// expression with no further match).
    pub(crate) fn next_after(&self, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
        match self {
            When::At(at) => (*at > after).then_some(*at),
            When::Cron(expr) => next_cron(&parse_cron(expr).ok()?, after, tz),
        }
    }
}

/// Five fields and no clock time (a local date-time has two fields and a `:`).
fn looks_like_cron(text: &str) -> bool {
    text.split_whitespace().count() == 5 && !text.contains(':')
}

fn parse_cron(expr: &str) -> Result<Cron, WhenError> {
    Cron::from_str(expr).map_err(|e| WhenError::BadCron(expr.to_owned(), e.to_string()))
}

fn next_cron(cron: &Cron, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
    let find = |from: DateTime<Utc>| {
        cron.find_next_occurrence(&from.with_timezone(&tz), false)
            .ok()
            .map(|at| at.with_timezone(&Utc))
    };
    match find(after)? {
        // Searching from inside a repeated (fall-back) hour can land on its first pass, which
        // is already over: look again from the end of the overlap.
        at if at <= after => find(after + chrono::TimeDelta::hours(1)).filter(|at| *at > after),
        at => Some(at),
    }
}

/// The instant of a local wall-clock time: the earlier one when the clock shows it twice, the
/// first instant after the gap when the clock skips it.
fn local_instant(local: NaiveDateTime, tz: Tz) -> DateTime<Utc> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => at.with_timezone(&Utc),
        LocalResult::None => {
            // In a DST gap: move on an hour (every gap in the tz database is at most that).
            let later = local + chrono::TimeDelta::hours(1);
            tz.from_local_datetime(&later)
                .earliest()
                .map_or_else(|| later.and_utc(), |at| at.with_timezone(&Utc))
        }
    }
}

fn future(at: DateTime<Utc>, now: DateTime<Utc>, tz: Tz) -> Result<When, WhenError> {
    if at <= now {
        return Err(WhenError::Past(format_local(at, tz)));
    }
    Ok(When::At(at))
}

/// `YYYY-MM-DD HH:MM` in `tz` (what the owner and the model read).
pub(crate) fn format_local(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string()
}

#[cfg(test)]
mod tests;
