//! `config.example.toml` at the repository root: it parses, and it validates for both binaries
//! once the environment supplies what the owner must fill in.

use std::path::PathBuf;

use kernel_common::Config;
use kernel_common::config::{Component, ConfigError, McpTransport, RawConfig};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config.example.toml")
}

fn env(name: &str) -> Option<String> {
    match name {
        "KERNEL_TELEGRAM_TOKEN" => Some("123456:EnvTokenForTheExample_abcdef".to_owned()),
        "KERNEL_PROVIDER_ANTHROPIC_API_KEY" => Some("sk-ant-env-example-0123456789".to_owned()),
        _ => None,
    }
}

#[test]
fn the_example_parses_with_every_section() {
    let text = std::fs::read_to_string(example()).unwrap();
    let raw = RawConfig::parse(&text).unwrap();
    assert_eq!(raw.telegram.allowed_user, Some(123_456_789));
    assert_eq!(raw.general.default_provider.as_deref(), Some("anthropic"));
    let names: Vec<&String> = raw.providers.keys().collect();
    assert_eq!(names, ["anthropic", "deepseek", "openai"]);
    assert_eq!(raw.providers["anthropic"].max_tokens, Some(16384));
    assert!(raw.titles.is_some());
    assert_eq!(
        raw.cli["claude_code"].args.as_deref().unwrap(),
        [
            "-p",
            "--output-format",
            "text",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Edit,Write,Read,Glob,Grep,NotebookEdit,mcp__kernel",
            "--permission-prompt-tool",
            "mcp__kernel__approve",
            "--settings",
            r#"{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true}}"#
        ]
    );
    let codex = raw.cli["codex"].args.as_deref().unwrap();
    assert_eq!(codex[..3], ["exec", "--sandbox", "workspace-write"]);
    assert!(!codex.iter().any(|a| a.contains("dangerously")));
    assert!(raw.mcp.servers.is_empty(), "no MCP server is enabled");
}

/// The example with its commented remote MCP servers (exa, context7) uncommented.
fn with_remote_mcp_enabled() -> String {
    let text = std::fs::read_to_string(example()).unwrap();
    let start = text.find("# [[mcp.servers]]\n# name = \"exa\"").unwrap();
    let end = text[start..].find("\n\n").unwrap() + start;
    let block: String = text[start..end]
        .lines()
        .map(|l| l.strip_prefix("# ").unwrap_or(l.trim_start_matches('#')))
        .collect::<Vec<_>>()
        .join("\n");
    format!("{}{block}{}", &text[..start], &text[end..])
}

#[test]
fn the_example_validates_for_agentd_when_env_has_the_key() {
    let config = Config::load(&example(), Component::Agentd, &env).unwrap();
    assert_eq!(config.general.default_provider, "anthropic");
    assert!(config.providers["anthropic"].available());
    assert!(!config.providers["openai"].available());
    assert_eq!(config.general.data_dir, config.base_dir.join("data"));
    assert!(
        config.mcp_servers.is_empty(),
        "a fresh agentd reaches no MCP server"
    );
    let warnings = config.warnings.join("\n");
    for part in ["providers.openai", "providers.deepseek", "titles.api_key"] {
        assert!(warnings.contains(part), "{part} not in {warnings}");
    }
}

#[test]
fn the_commented_remote_mcp_examples_validate_once_uncommented() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, with_remote_mcp_enabled()).unwrap();
    let config = Config::load(&path, Component::Agentd, &env).unwrap();
    let names: Vec<&str> = config.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["exa"], "context7 needs CONTEXT7_API_KEY");
    assert!(config.warnings.join("\n").contains("CONTEXT7_API_KEY"));
    let with_ctx7 = |k: &str| {
        if k == "CONTEXT7_API_KEY" {
            Some("c7-0123456789".to_owned())
        } else {
            env(k)
        }
    };
    let config = Config::load(&path, Component::Agentd, &with_ctx7).unwrap();
    let McpTransport::Http { headers, .. } = &config.mcp_servers[1].transport else {
        panic!()
    };
    assert_eq!(headers["CONTEXT7_API_KEY"].expose(), "c7-0123456789");
}

#[test]
fn the_example_validates_for_tg_when_env_has_the_token() {
    let config = Config::load(&example(), Component::Tg, &env).unwrap();
    assert_eq!(
        config.telegram.token.unwrap().expose(),
        "123456:EnvTokenForTheExample_abcdef"
    );
    assert!(
        config.warnings.iter().any(|w| w.contains("example id")),
        "{:?}",
        config.warnings
    );
}

#[test]
fn the_unfilled_example_says_what_to_fill_in() {
    for (component, key) in [
        (Component::Agentd, "providers.anthropic.api_key"),
        (Component::Tg, "telegram.token"),
    ] {
        let err = Config::load(&example(), component, &|_| None).unwrap_err();
        let ConfigError::Invalid { problems } = err else {
            panic!("{err}")
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains(key) && problems[0].contains("placeholder"),
            "{problems:?}"
        );
    }
}
