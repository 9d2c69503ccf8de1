//! `[providers.<name>.retry]`, `[titles.retry]`, `first_byte_timeout_secs` and
//! `stream_idle_timeout_secs`: defaults, custom values, and out-of-range values refused by `--check`
//! naming the key and the range.

use crate::support;

use std::time::Duration;

use kernel_common::config::Component;
use kernel_common::config::retry::RetryConfig;
use support::{VALID, assert_one_problem, load_text};

fn with(extra: &str) -> String {
    format!("{VALID}{extra}")
}

#[test]
fn retries_and_stall_timeouts_default_to_three_retries_and_slow_model_friendly_timeouts() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    let p = &config.providers["anthropic"];
    assert_eq!(
        p.retry,
        RetryConfig {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_wait: Duration::from_secs(30),
        }
    );
    assert_eq!(p.first_byte_timeout, Duration::from_secs(300));
    assert_eq!(p.stream_idle_timeout, Duration::from_secs(120));
    assert!(
        config.summary().contains("retries: 3 (from 1000 ms"),
        "{}",
        config.summary()
    );
}

#[test]
fn custom_retry_settings_are_read_for_providers_and_titles() {
    let text = with(
        "first_byte_timeout_secs = 600\nretry = { max_retries = 0, base_delay_ms = 250, max_wait_secs = 5 }\n\n[titles]\ntype = \"claude\"\nmodel = \"m\"\nmax_tokens = 10\napi_key = \"sk-titles-0123456789\"\n[titles.retry]\nmax_retries = 1\n",
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    let p = &config.providers["anthropic"];
    assert_eq!(p.first_byte_timeout, Duration::from_secs(600));
    assert_eq!(
        p.retry,
        RetryConfig {
            max_retries: 0,
            base_delay: Duration::from_millis(250),
            max_wait: Duration::from_secs(5),
        }
    );
    assert_eq!(config.titles.unwrap().retry.max_retries, 1);
}

#[test]
fn out_of_range_retry_and_timeout_values_are_refused_by_key() {
    let cases = [
        (
            "retry = { max_retries = 11 }",
            "providers.anthropic.retry.max_retries",
            "0 (never retry) to 10",
        ),
        (
            "retry = { base_delay_ms = 0 }",
            "providers.anthropic.retry.base_delay_ms",
            "10 to 60000",
        ),
        (
            "retry = { max_wait_secs = 86400 }",
            "providers.anthropic.retry.max_wait_secs",
            "1 to 600",
        ),
        (
            "first_byte_timeout_secs = 0",
            "providers.anthropic.first_byte_timeout_secs",
            "1 to 3600",
        ),
        (
            "stream_idle_timeout_secs = 100000",
            "providers.anthropic.stream_idle_timeout_secs",
            "1 to 3600",
        ),
    ];
    for (line, key, range) in cases {
        assert_one_problem(
            load_text(&with(&format!("{line}\n")), Component::Agentd),
            &[key, range],
        );
    }
    let unknown = with("retry = { attempts = 3 }\n");
    assert!(load_text(&unknown, Component::Agentd).is_err());
}
