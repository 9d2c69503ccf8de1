//! Test support: writing a `config.toml` into a fresh temp dir and loading it with a fake env.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

use kernel_common::Config;
use kernel_common::config::{Component, ConfigError};

/// Secrets the tests put in, so they can assert none leaks.
pub(crate) const TG_TOKEN: &str = "123456789:AAFileTelegramToken_abcdefXYZ";
pub(crate) const ANTHROPIC_KEY: &str = "sk-ant-file-key-0123456789abcdef";

/// A config valid for both components: the default provider has a key, telegram is complete.
pub(crate) const VALID: &str = r#"
[telegram]
token = "123456789:AAFileTelegramToken_abcdefXYZ"
allowed_user = 42

[general]
default_provider = "anthropic"

[providers.anthropic]
type = "claude"
api_key = "sk-ant-file-key-0123456789abcdef"
max_tokens = 1024
default_model = "claude-test"
"#;

/// A temp dir holding `config.toml`.
pub(crate) struct Cfg {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// Writes `toml` as `<tempdir>/config.toml`.
pub(crate) fn write(toml: &str) -> Cfg {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, toml).unwrap();
    Cfg { dir, path }
}

/// Loads `cfg` for `component` with exactly `env` as the environment.
pub(crate) fn load(
    cfg: &Cfg,
    component: Component,
    env: &[(&str, &str)],
) -> Result<Config, ConfigError> {
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::load(&cfg.path, component, &move |k| env.get(k).cloned())
}

/// Writes and loads with an empty environment.
pub(crate) fn load_text(toml: &str, component: Component) -> Result<Config, ConfigError> {
    load(&write(toml), component, &[])
}

/// The problems of an `Invalid` error (panics on any other result).
pub(crate) fn problems(result: Result<Config, ConfigError>) -> Vec<String> {
    match result {
        Err(ConfigError::Invalid { problems }) => problems,
        Err(other) => panic!("expected Invalid, got {other}"),
        Ok(_) => panic!("expected Invalid, got a valid config"),
    }
}

/// Asserts exactly one problem that contains every one of `parts`.
pub(crate) fn assert_one_problem(result: Result<Config, ConfigError>, parts: &[&str]) {
    let problems = problems(result);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    for part in parts {
        assert!(
            problems[0].contains(part),
            "{part:?} not in {:?}",
            problems[0]
        );
    }
}
