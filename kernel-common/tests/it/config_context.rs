//! `context_tokens`, `reserve_output_tokens`, `model_context_tokens` and `prices` of a provider:
//! defaults by model family, overrides, and refusals by key.

use crate::support;

use kernel_common::config::Component;
use support::{VALID, assert_one_problem, load_text};

fn provider_with(lines: &str) -> String {
    VALID.replace(
        "default_model = \"claude-test\"",
        &format!("default_model = \"claude-test\"\n{lines}"),
    )
}

#[test]
fn windows_default_by_family_and_follow_the_config() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    let p = &config.providers["anthropic"];
    let w = p.window("claude-test");
    assert_eq!(
        (w.context_tokens, w.reserve_output_tokens),
        (200_000, 1_024)
    );
    let config = load_text(
        &provider_with(
            "context_tokens = 64000\nreserve_output_tokens = 4000\nmodel_context_tokens = { \"big\" = 1000000 }\n\n[providers.anthropic.prices.\"claude-test\"]\ninput = 3.0\noutput = 15.0",
        ),
        Component::Agentd,
    )
    .unwrap();
    let p = &config.providers["anthropic"];
    assert_eq!(p.window("claude-test").input_budget(), 60_000);
    assert_eq!(p.window("big").context_tokens, 1_000_000);
    let price = p.context.prices["claude-test"];
    assert_eq!(
        (price.input, price.output, price.cache_read),
        (3.0, 15.0, 3.0)
    );
}

#[test]
fn nonsense_windows_and_prices_are_refused_by_key() {
    assert_one_problem(
        load_text(&provider_with("context_tokens = 100"), Component::Agentd),
        &["providers.anthropic.context_tokens", "at least 4096"],
    );
    assert_one_problem(
        load_text(
            &provider_with("context_tokens = 8000\nreserve_output_tokens = 8000"),
            Component::Agentd,
        ),
        &[
            "providers.anthropic.reserve_output_tokens",
            "below context_tokens",
        ],
    );
    assert_one_problem(
        load_text(
            &provider_with("\n[providers.anthropic.prices.\"claude-test\"]\ninput = -1.0"),
            Component::Agentd,
        ),
        &["providers.anthropic.prices.\"claude-test\"", "zero or more"],
    );
}
