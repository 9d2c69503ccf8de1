//! kernel-tg's intake: `telegram.intake_wait_secs` (default 120 s, 1–3600) and
//! `telegram.max_backlog_age_secs` (default 24 h, 60 s – 7 days); out-of-range values are
//! refused by key with the range.

use std::time::Duration;

use crate::support;

use kernel_common::config::Component;
use support::{VALID, assert_one_problem, load_text};

fn with(lines: &str) -> String {
    VALID.replace("allowed_user = 42", &format!("allowed_user = 42\n{lines}"))
}

#[test]
fn intake_waits_two_minutes_and_takes_a_day_of_backlog_by_default() {
    let config = load_text(VALID, Component::Tg).unwrap();
    assert_eq!(config.telegram.intake_wait, Duration::from_secs(120));
    assert_eq!(config.telegram.max_backlog_age, Duration::from_secs(86_400));
    let text = with("intake_wait_secs = 30\nmax_backlog_age_secs = 3600");
    let config = load_text(&text, Component::Tg).unwrap();
    assert_eq!(config.telegram.intake_wait, Duration::from_secs(30));
    assert_eq!(config.telegram.max_backlog_age, Duration::from_secs(3_600));
}

#[test]
fn out_of_range_intake_values_are_refused_by_key() {
    for value in ["0", "3601"] {
        assert_one_problem(
            load_text(&with(&format!("intake_wait_secs = {value}")), Component::Tg),
            &["telegram.intake_wait_secs", "between 1 and 3600"],
        );
    }
    for value in ["59", "604801"] {
        assert_one_problem(
            load_text(
                &with(&format!("max_backlog_age_secs = {value}")),
                Component::Tg,
            ),
            &["telegram.max_backlog_age_secs", "between 60 and 604800"],
        );
    }
}
