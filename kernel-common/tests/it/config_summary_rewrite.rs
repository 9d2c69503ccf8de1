//! `[summary]`: off by default (even with a usable `[titles]`), the `[titles]` endpoint or a
//! configured provider when enabled, shown masked in `--check`, and refusals.

use crate::support;

use std::time::Duration;

use kernel_common::config::{Component, DEFAULT_SUMMARY_MIN_NEW_ROUNDS};
use support::{ANTHROPIC_KEY, VALID, assert_one_problem, load_text};

const TITLES: &str = "[titles]\ntype = \"openai_compat\"\napi_base = \"http://127.0.0.1:9/v1\"\n\
                      api_key = \"sk-titles-0123456789\"\nmodel = \"mini\"\n";

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn off_by_default_even_with_a_usable_titles_endpoint() {
    for text in [VALID.to_owned(), with(TITLES), with("[summary]\n")] {
        let config = load_text(&text, Component::Agentd).unwrap();
        assert!(!config.summary_rewrite.enabled, "{text}");
        assert!(
            config
                .summary()
                .contains("summary rewrite: off (rule-based summaries)"),
            "{}",
            config.summary()
        );
    }
    let off = with(&format!("{TITLES}\n[summary]\nenabled = false\n"));
    assert!(
        !load_text(&off, Component::Agentd)
            .unwrap()
            .summary_rewrite
            .enabled
    );
}

#[test]
fn enabled_with_the_titles_endpoint_and_defaults() {
    let text = with(&format!("{TITLES}\n[summary]\nenabled = true\n"));
    let config = load_text(&text, Component::Agentd).unwrap();
    let r = &config.summary_rewrite;
    assert!(r.enabled);
    let e = r.endpoint.as_ref().unwrap();
    assert_eq!(
        (e.model.as_str(), e.api_base.as_str(), e.max_tokens),
        ("mini", "http://127.0.0.1:9/v1", 1024)
    );
    assert_eq!(r.min_new_rounds, DEFAULT_SUMMARY_MIN_NEW_ROUNDS);
    assert_eq!(r.timeout, Duration::from_secs(60));
    let shown = config.summary();
    assert!(
        shown.contains("summary rewrite: on; model mini at http://127.0.0.1:9/v1"),
        "{shown}"
    );
    assert!(!shown.contains("sk-titles-0123456789"), "{shown}");
}

#[test]
fn a_provider_and_settings_are_read_and_the_key_is_masked() {
    let text = with(
        "[summary]\nenabled = true\nprovider = \"anthropic\"\nmodel = \"claude-small\"\n\
         max_tokens = 512\ntimeout_secs = 30\nmin_new_rounds = 5\n",
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    let r = &config.summary_rewrite;
    let e = r.endpoint.as_ref().unwrap();
    assert_eq!((e.model.as_str(), e.max_tokens), ("claude-small", 512));
    assert_eq!(e.api_base, "https://api.anthropic.com");
    assert_eq!(
        (r.enabled, r.min_new_rounds, r.timeout),
        (true, 5, Duration::from_secs(30))
    );
    let shown = config.summary();
    assert!(
        shown.contains("summary rewrite: on; model claude-small"),
        "{shown}"
    );
    assert!(shown.contains("after 5 new folded rounds"), "{shown}");
    assert!(!shown.contains(ANTHROPIC_KEY), "{shown}");
    let default_model = with("[summary]\nenabled = true\nprovider = \"anthropic\"\n");
    let e = load_text(&default_model, Component::Agentd)
        .unwrap()
        .summary_rewrite
        .endpoint
        .unwrap();
    assert_eq!(e.model, "claude-test");
}

#[test]
fn bad_settings_are_refused() {
    for (extra, needles) in [
        (
            "provider = \"nope\"",
            &["summary.provider", "nope", "anthropic"][..],
        ),
        ("enabled = true", &["summary.enabled", "[titles]"][..]),
        (
            "provider = \"anthropic\"\nmin_new_rounds = 0",
            &["summary.min_new_rounds"][..],
        ),
        (
            "provider = \"anthropic\"\nmin_new_rounds = 1001",
            &["summary.min_new_rounds"][..],
        ),
        (
            "provider = \"anthropic\"\nmax_tokens = 0",
            &["summary.max_tokens"][..],
        ),
        (
            "provider = \"anthropic\"\ntimeout_secs = 0",
            &["summary.timeout_secs"][..],
        ),
    ] {
        assert_one_problem(
            load_text(&with(&format!("[summary]\n{extra}\n")), Component::Agentd),
            needles,
        );
    }
    // kernel-tg does not rewrite summaries: a missing provider key is not its problem.
    assert!(load_text(&with("[summary]\nenabled = true\n"), Component::Tg).is_ok());
    assert!(load_text(&with("[summary]\nenable = true\n"), Component::Agentd).is_err());
}
