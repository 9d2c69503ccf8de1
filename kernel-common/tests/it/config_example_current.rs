//! `config.example.toml` documents every CLI option with its default and ships current model
//! names (the ones README's grpcurl example uses).

use std::path::PathBuf;

use kernel_common::config::{DEFAULT_CLI_TIMEOUT, RawConfig};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn example() -> String {
    std::fs::read_to_string(root().join("config.example.toml")).unwrap()
}

#[test]
fn the_cli_time_limit_is_documented_with_its_default() {
    let text = example();
    let line = format!("timeout_secs = {}", DEFAULT_CLI_TIMEOUT.as_secs());
    let cli_part = &text[text.find("# CLI delegation").expect("the CLI part")..];
    let cli_part = &cli_part[..cli_part.find("[[mcp.servers]]").unwrap()];
    assert!(
        cli_part
            .lines()
            .any(|l| l.trim_start().starts_with('#') && l.contains(&line)),
        "{line} (commented) in the CLI part:\n{cli_part}"
    );
}

#[test]
fn model_names_are_current() {
    let raw = RawConfig::parse(&example()).unwrap();
    let anthropic = &raw.providers["anthropic"];
    let models = anthropic.models.clone().unwrap_or_default();
    assert_eq!(
        anthropic.default_model.as_deref(),
        Some("claude-sonnet-5"),
        "{models:?}"
    );
    assert!(models.iter().any(|m| m == "claude-opus-5-5"), "{models:?}");
    let titles = raw
        .titles
        .as_ref()
        .unwrap()
        .model
        .clone()
        .unwrap_or_default();
    assert!(titles.starts_with("claude-haiku-5"), "{titles}");
    let text = example();
    for old in [
        "claude-sonnet-4",
        "claude-opus-4",
        "claude-haiku-4",
        "gpt-4o",
    ] {
        assert!(!text.contains(old), "{old} is a year old");
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for line in readme.lines().filter(|l| l.contains("SelectModel")) {
        let model = line
            .split("\"model\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a model in the grpcurl example");
        assert!(
            models.iter().any(|m| m == model),
            "{model} not in {models:?}"
        );
    }
}
