//! How answers take form: `telegram.live_preview` (default on) and `telegram.show_reasoning`
//! (default off), and `[providers.<name>.thinking]` — a budget for `claude`, an effort for
//! `openai_compat`, optionally only for some models — with what cannot be sent refused by key.

use crate::support;

use kernel_common::config::{Component, ThinkingConfig, ThinkingMode};
use support::{VALID, assert_one_problem, load_text};

/// `VALID` with the claude provider's `max_tokens` at 4096 and `extra` appended.
fn roomy(extra: &str) -> String {
    format!(
        "{}\n{extra}",
        VALID.replace("max_tokens = 1024", "max_tokens = 4096")
    )
}

#[test]
fn live_preview_is_on_and_reasoning_off_by_default() {
    let config = load_text(VALID, Component::Tg).unwrap();
    assert!(config.telegram.live_preview);
    assert!(!config.telegram.show_reasoning);
    let text = VALID.replace(
        "allowed_user = 42",
        "allowed_user = 42\nlive_preview = false\nshow_reasoning = true",
    );
    let config = load_text(&text, Component::Tg).unwrap();
    assert!(!config.telegram.live_preview);
    assert!(config.telegram.show_reasoning);
    assert!(
        load_text(VALID, Component::Agentd).unwrap().providers["anthropic"]
            .thinking
            .is_none()
    );
}

#[test]
fn claude_thinking_takes_a_budget_below_max_tokens() {
    let text =
        roomy("[providers.anthropic.thinking]\nbudget_tokens = 2048\nmodels = [\"claude-test\"]");
    let config = load_text(&text, Component::Agentd).unwrap();
    assert_eq!(
        config.providers["anthropic"].thinking,
        Some(ThinkingConfig {
            mode: ThinkingMode::Budget(2048),
            models: vec!["claude-test".into()],
        })
    );
    for budget in ["512", "4096"] {
        let text = roomy(&format!(
            "[providers.anthropic.thinking]\nbudget_tokens = {budget}"
        ));
        assert_one_problem(
            load_text(&text, Component::Agentd),
            &[
                "providers.anthropic.thinking.budget_tokens",
                "1024",
                "max_tokens",
            ],
        );
    }
    let text = roomy("[providers.anthropic.thinking]\neffort = \"high\"");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["providers.anthropic.thinking.effort", "budget_tokens"],
    );
    let text = roomy("[providers.anthropic.thinking]\nbudget_tokens = 2048\nmodels = [\"other\"]");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["providers.anthropic.thinking.models", "\"other\""],
    );
}

#[test]
fn openai_compatible_thinking_takes_an_effort() {
    let provider = "[providers.local]\ntype = \"openai_compat\"\napi_key = \"sk-local-0123456789\"\n\
                    default_model = \"r1\"\n[providers.local.thinking]\n";
    let text = roomy(&format!("{provider}effort = \"medium\""));
    let config = load_text(&text, Component::Agentd).unwrap();
    assert_eq!(
        config.providers["local"].thinking.as_ref().map(|t| &t.mode),
        Some(&ThinkingMode::Effort("medium".into()))
    );
    let text = roomy(&format!("{provider}effort = \"extreme\""));
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["providers.local.thinking.effort", "low, medium, high"],
    );
}
