//! Writing test configs: a `config.toml` in a fresh temp dir, pointed at fakes.

use std::path::PathBuf;

/// A temp dir holding a `config.toml` (and, once started, the data dir).
pub struct TestConfig {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// Secrets the test configs use, so tests can assert they never leak.
pub const TELEGRAM_TOKEN: &str = "123456789:AAFakeTelegramTokenForTests_xyzXYZ";
/// The default provider's key in test configs.
pub const PROVIDER_KEY: &str = "sk-test-provider-key-0123456789abcdef";
/// The agentd TCP token in test configs.
pub const AGENTD_TOKEN: &str = "agentd-token-0123456789abcdef";

/// The line in the default provider's section that turns retries off: suites written for one
/// failure per call keep it; the retry suites remove it (`TestConfig::rewrite`).
pub const NO_RETRY: &str = "retry = { max_retries = 0 }";

/// The model of the cheap `[providers.mem]` that [`memory_provider`] adds.
pub const MEMORY_MODEL: &str = "fake-memory-model";

/// Config lines for background memory work on its own fake: a `[providers.mem]` at `mem_url`
/// (retries off) and `[memory_auto]` on it, followed by `memory_auto`'s own lines (which may
/// open further tables, e.g. `[memory.consolidation]`). For `TestConfig::new`'s `extra`.
pub fn memory_provider(mem_url: &str, memory_auto: &str) -> String {
    format!(
        r#"
[providers.mem]
type = "claude"
api_base = "{mem_url}"
api_key = "sk-test-memory-key-0123456789abcdef"
max_tokens = 1024
default_model = "{MEMORY_MODEL}"
retry = {{ max_retries = 0 }}

[memory_auto]
provider = "mem"
{memory_auto}
"#
    )
}

impl TestConfig {
    /// A config whose default provider `fake` (type `claude`) points at `llm_url`, with `extra`
    /// TOML appended (e.g. an `[agentd]` section).
    pub fn new(llm_url: &str, extra: &str) -> TestConfig {
        Self::with_kind("claude", llm_url, extra)
    }

    /// Like [`TestConfig::new`] with the default provider's `type` set to `kind`
    /// (`claude` → api_base `llm_url`; `openai_compat` → `llm_url/v1`).
    pub fn with_kind(kind: &str, llm_url: &str, extra: &str) -> TestConfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let api_base = if kind == "claude" {
            llm_url.to_string()
        } else {
            format!("{llm_url}/v1")
        };
        let toml = format!(
            r#"
[telegram]
token = "{TELEGRAM_TOKEN}"
allowed_user = 42

[general]
timezone = "Asia/Shanghai"
default_provider = "fake"
data_dir = "data"

[providers.fake]
type = "{kind}"
api_base = "{api_base}"
api_key = "{PROVIDER_KEY}"
{NO_RETRY}
max_tokens = 1024
default_model = "fake-model"
models = ["fake-model", "fake-model-2"]

{extra}
"#
        );
        std::fs::write(&path, toml).expect("write config");
        TestConfig { dir, path }
    }

    /// Loads it as kernel-agentd would, with an empty environment.
    pub fn load(&self) -> kernel_common::Config {
        kernel_common::Config::load(
            &self.path,
            kernel_common::config::Component::Agentd,
            &|_| None,
        )
        .expect("valid test config")
    }

    /// Rewrites the config file (e.g. to drop a key before a restart).
    pub fn rewrite(&self, edit: impl FnOnce(String) -> String) {
        let text = std::fs::read_to_string(&self.path).expect("read config");
        std::fs::write(&self.path, edit(text)).expect("write config");
    }

    /// `<dir>/data`.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The default socket path, `<dir>/data/agentd.sock`.
    pub fn socket(&self) -> PathBuf {
        self.data_dir().join("agentd.sock")
    }
}
