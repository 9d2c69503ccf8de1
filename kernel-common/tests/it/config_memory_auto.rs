//! `[memory_auto]`: on by default when `[titles]` has a key (its endpoint, a larger
//! `max_tokens`), a configured provider instead, off without a usable provider, and refusals.

use crate::support;

use std::time::Duration;

use kernel_common::config::{
    Component, DEFAULT_MEMORY_AUTO_INTERVAL, DEFAULT_MEMORY_AUTO_MAX,
    DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE,
};
use support::{VALID, assert_one_problem, load_text};

const TITLES: &str = "[titles]\ntype = \"openai_compat\"\napi_base = \"http://127.0.0.1:9/v1\"\n\
                      api_key = \"sk-titles-0123456789\"\nmodel = \"mini\"\n";

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn on_by_default_with_the_titles_endpoint() {
    let config = load_text(&with(TITLES), Component::Agentd).unwrap();
    let m = &config.memory_auto;
    assert!(m.enabled);
    let e = m.endpoint.as_ref().unwrap();
    assert_eq!(
        (e.model.as_str(), e.api_base.as_str()),
        ("mini", "http://127.0.0.1:9/v1")
    );
    assert_eq!(e.max_tokens, 2048, "more than a title needs");
    assert_eq!(m.interval, DEFAULT_MEMORY_AUTO_INTERVAL);
    assert_eq!(m.min_importance, DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE);
    assert_eq!(m.max_auto, DEFAULT_MEMORY_AUTO_MAX);
    assert_eq!(m.timeout, Duration::from_secs(120));
    assert!(config.summary().contains("memory_auto: on; model mini"));
}

#[test]
fn off_without_a_usable_provider_or_when_disabled() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    assert!(!config.memory_auto.enabled && config.memory_auto.endpoint.is_none());
    assert!(config.summary().contains("memory_auto: off"));
    let keyless = TITLES.replace("api_key = \"sk-titles-0123456789\"\n", "");
    assert!(
        !load_text(&with(&keyless), Component::Agentd)
            .unwrap()
            .memory_auto
            .enabled
    );
    let off = with(&format!("{TITLES}\n[memory_auto]\nenabled = false\n"));
    assert!(
        !load_text(&off, Component::Agentd)
            .unwrap()
            .memory_auto
            .enabled
    );
}

#[test]
fn a_provider_and_settings_are_read() {
    let text = with(
        "[memory_auto]\nprovider = \"anthropic\"\nmodel = \"claude-small\"\ninterval = 5\n\
         min_importance = 4\nmax_auto = 100\nmax_tokens = 512\ntimeout_secs = 30\n",
    );
    let m = load_text(&text, Component::Agentd).unwrap().memory_auto;
    assert!(m.enabled);
    let e = m.endpoint.unwrap();
    assert_eq!((e.model.as_str(), e.max_tokens), ("claude-small", 512));
    assert_eq!(e.api_base, "https://api.anthropic.com");
    assert!(e.api_key.is_some());
    assert_eq!((m.interval, m.min_importance, m.max_auto), (5, 4, 100));
    assert_eq!(m.timeout, Duration::from_secs(30));
    let default_model = with("[memory_auto]\nprovider = \"anthropic\"\n");
    let e = load_text(&default_model, Component::Agentd)
        .unwrap()
        .memory_auto
        .endpoint
        .unwrap();
    assert_eq!(e.model, "claude-test");
}

#[test]
fn bad_settings_are_refused() {
    for (extra, needles) in [
        (
            "provider = \"nope\"",
            &["memory_auto.provider", "nope", "anthropic"][..],
        ),
        ("enabled = true", &["memory_auto.enabled", "[titles]"][..]),
        (
            "provider = \"anthropic\"\ninterval = 0",
            &["memory_auto.interval"][..],
        ),
        (
            "provider = \"anthropic\"\nmin_importance = 6",
            &["memory_auto.min_importance"][..],
        ),
        (
            "provider = \"anthropic\"\nmax_auto = 0",
            &["memory_auto.max_auto"][..],
        ),
        (
            "provider = \"anthropic\"\nmax_tokens = 0",
            &["memory_auto.max_tokens"][..],
        ),
        (
            "provider = \"anthropic\"\ntimeout_secs = 0",
            &["memory_auto.timeout_secs"][..],
        ),
    ] {
        assert_one_problem(
            load_text(
                &with(&format!("[memory_auto]\n{extra}\n")),
                Component::Agentd,
            ),
            needles,
        );
    }
    // kernel-tg does not run the job: a missing provider key is not its problem.
    assert!(load_text(&with("[memory_auto]\nenabled = true\n"), Component::Tg).is_ok());
}
