//! The serde mirror of `config.toml`: field names exactly as written, no I/O, no defaults applied.
//!
//! Every table denies unknown keys, so a typo (`api_ky`) is an error naming the key instead of a
//! silently ignored line. Enumerated values (`type`, `locale`) stay strings here: stage two
//! ([`super::validate`]) checks them together with everything else, so one run reports all
//! problems at once.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The whole file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    #[serde(default)]
    pub telegram: RawTelegram,
    #[serde(default)]
    pub general: RawGeneral,
    /// `[providers.<name>]`, by name.
    #[serde(default)]
    pub providers: BTreeMap<String, RawProvider>,
    pub titles: Option<RawTitles>,
    /// `[cli.<name>]`, by name.
    #[serde(default)]
    pub cli: BTreeMap<String, RawCli>,
    #[serde(default)]
    pub mcp: RawMcp,
    #[serde(default)]
    pub agentd: RawAgentd,
    pub stt: Option<RawStt>,
    pub tts: Option<RawTts>,
    /// `[memory_auto]`: background conversation notes and automatic memories.
    pub memory_auto: Option<RawMemoryAuto>,
    /// `[summary]`: the optional cheap-model rewrite of session summaries.
    pub summary: Option<RawSummary>,
    /// `[memory]`: long-term memory (`[memory.consolidation]`).
    pub memory: Option<RawMemory>,
    pub embeddings: Option<RawEmbeddings>,
    /// `[approvals]`: when risky actions wait for the owner's tap.
    pub approvals: Option<RawApprovals>,
    /// `[budget]`: spending limits.
    pub budget: Option<RawBudget>,
    /// `[web]`: the web console (kernel-web).
    pub web: Option<RawWeb>,
    /// `[backup]`: automatic daily backups.
    pub backup: Option<RawBackup>,
    /// `[watch]`: the bounds of watches.
    pub watch: Option<RawWatch>,
}

/// `[web]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeb {
    pub listen: Option<String>,
    /// The console's address as the owner's browser reaches it (login links start with it).
    pub public_url: Option<String>,
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
}

/// `[budget]`. Amounts are kept as TOML values so that `--check` can name a non-number.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBudget {
    pub daily: Option<toml::Value>,
    pub monthly: Option<toml::Value>,
    pub warn_at: Option<toml::Value>,
    /// `[budget.providers.<name>]`.
    #[serde(default)]
    pub providers: BTreeMap<String, RawLimits>,
}

/// `daily` and `monthly` in USD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub daily: Option<toml::Value>,
    pub monthly: Option<toml::Value>,
}

/// `[backup]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBackup {
    /// A verified backup once a day while agentd runs (default true).
    pub daily: Option<bool>,
    /// Daily backups kept (default 7, 1–365).
    pub keep: Option<u32>,
    /// Where backups go (default `<data_dir>/backups`).
    pub dir: Option<String>,
}

/// `[watch]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWatch {
    /// Model calls per run (default 4, 1–20).
    pub max_steps: Option<u32>,
    /// Tokens one run may use, every call summed (default 30 000, at least 1 000).
    pub max_tokens_per_run: Option<u64>,
    /// The shortest cadence of a watch (default 5, 1–1440).
    pub min_interval_minutes: Option<u32>,
}

/// `[approvals]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovals {
    /// `"untrusted"` (default), `"always"` or `"off"`.
    pub mode: Option<String>,
    /// Seconds an approval waits before it counts as denied (default 600).
    pub timeout_secs: Option<u64>,
}

/// `[telegram]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTelegram {
    pub token: Option<String>,
    pub allowed_user: Option<i64>,
    pub api_url: Option<String>,
    /// Drafts while a turn streams (default true).
    pub live_preview: Option<bool>,
    /// The model's reasoning before the answer (default false).
    pub show_reasoning: Option<bool>,
    /// A cost footer under each answer (default false).
    pub show_cost: Option<bool>,
    /// How long a message waits for agentd before the owner is told (default 120).
    pub intake_wait_secs: Option<u64>,
    /// Backlog messages older than this are not run (default 86400).
    pub max_backlog_age_secs: Option<u64>,
    /// The reaction set on a message kernel-tg takes (default "👀"; empty: none).
    pub ack_reaction: Option<String>,
    /// Topics as parallel conversations: "auto" (default) or "off".
    pub topics: Option<String>,
    /// Edits of messages older than this are ignored (default 48).
    pub edit_window_hours: Option<u64>,
}

/// `[general]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGeneral {
    pub timezone: Option<String>,
    pub default_provider: Option<String>,
    /// Providers a failed model call moves on to, in order.
    pub fallback_providers: Option<Vec<String>>,
    pub default_workspace: Option<String>,
    pub context_rounds: Option<u32>,
    pub memory_recall_k: Option<u32>,
    pub data_dir: Option<String>,
    /// `"zh"` or `"en"`.
    pub locale: Option<String>,
    pub soul_file: Option<String>,
    /// The skills folder (`<id>/SKILL.md` each).
    pub skills_dir: Option<String>,
    /// Seconds `ask_user` waits for an answer.
    pub ask_timeout_secs: Option<u64>,
    /// Turns (of different sessions) running at once.
    pub max_parallel_turns: Option<u32>,
}

/// `[providers.<name>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProvider {
    /// `"claude"` or `"openai_compat"`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub max_tokens: Option<u32>,
    pub default_model: Option<String>,
    pub models: Option<Vec<String>>,
    pub headers: Option<BTreeMap<String, String>>,
    pub stream_idle_timeout_secs: Option<u64>,
    /// Seconds to wait for the first byte of an answer (response head and first stream data).
    pub first_byte_timeout_secs: Option<u64>,
    /// `[providers.<name>.retry]`.
    pub retry: Option<RawRetry>,
    pub thinking: Option<RawThinking>,
    /// The model's context window in tokens (default by model family).
    pub context_tokens: Option<u32>,
    /// Tokens kept free for the answer (default: `max_tokens`).
    pub reserve_output_tokens: Option<u32>,
    /// Per-model `context_tokens` overrides.
    pub model_context_tokens: Option<BTreeMap<String, u32>>,
    /// `[providers.<name>.prices."<model>"]`: USD per million tokens.
    pub prices: Option<BTreeMap<String, RawPrice>>,
    /// The largest image (decoded bytes) the provider takes; bigger ones are scaled down.
    pub max_image_bytes: Option<usize>,
    /// The most pixels a side of an image the provider takes; bigger ones are scaled down.
    pub max_image_side_px: Option<u32>,
}

/// A model's prices, USD per million tokens.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrice {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

/// `[providers.<name>.thinking]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThinking {
    /// `claude`: the extended-thinking token budget.
    pub budget_tokens: Option<u32>,
    /// `openai_compat`: `reasoning_effort`.
    pub effort: Option<String>,
    /// Only these models (default: all of the provider's).
    pub models: Option<Vec<String>>,
}

/// `[titles]`: its own endpoint, not a reference to a provider.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTitles {
    /// `"claude"` or `"openai_compat"`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub headers: Option<BTreeMap<String, String>>,
    /// `[titles.retry]`.
    pub retry: Option<RawRetry>,
}

/// `[providers.<name>.retry]` / `[titles.retry]`: retries of a failed model call.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetry {
    pub max_retries: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_wait_secs: Option<u64>,
}

/// `[cli.<name>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCli {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// Seconds a delegation may run before its process group is killed (default 600).
    pub timeout_secs: Option<u64>,
}

/// `[mcp]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// `[[mcp.servers]]`, in file order.
    #[serde(default)]
    pub servers: Vec<RawMcpServer>,
}

/// One `[[mcp.servers]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcpServer {
    pub name: Option<String>,
    /// `"http"` or `"stdio"`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// http only; may contain `${VAR}`.
    pub url: Option<String>,
    /// http only; values may contain `${VAR}`.
    pub headers: Option<BTreeMap<String, String>>,
    /// stdio only.
    pub command: Option<String>,
    /// stdio only.
    pub args: Option<Vec<String>>,
    /// stdio only; values may contain `${VAR}`.
    pub env: Option<BTreeMap<String, String>>,
    /// Seconds to connect, initialise and list tools (default 10).
    pub connect_timeout_secs: Option<u64>,
    /// Seconds one tool call may take (default 120).
    pub call_timeout_secs: Option<u64>,
    /// `"auto"` (default: a tool not annotated read-only asks), `"always"` or `"never"`.
    pub approval: Option<String>,
}

/// `[agentd]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgentd {
    pub socket: Option<String>,
    pub listen: Option<String>,
    pub token: Option<String>,
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
    pub endpoint: Option<String>,
}

/// `[stt]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStt {
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    /// Seconds one transcription may take (default 120).
    pub timeout_secs: Option<u64>,
}

/// `[tts]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTts {
    /// `"openai_compat"` (the default) or `"edge"`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Longest spoken text in characters.
    pub max_chars: Option<u32>,
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    pub voice: Option<String>,
    /// `edge`: speaking rate, `+N%` / `-N%`.
    pub rate: Option<String>,
    /// `edge`: pitch, `+NHz` / `-NHz`.
    pub pitch: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    /// Seconds one synthesis may take (default 90).
    pub timeout_secs: Option<u64>,
}

/// `[memory_auto]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMemoryAuto {
    /// Default: on when its provider is usable.
    pub enabled: Option<bool>,
    /// A `[providers.<name>]` entry; default: the `[titles]` endpoint.
    pub provider: Option<String>,
    /// Default: the `[titles]` model, or the provider's default model.
    pub model: Option<String>,
    /// User messages between two runs (default 10).
    pub interval: Option<u32>,
    /// Items at or above this importance (1–5) become memories (default 3).
    pub min_importance: Option<u32>,
    /// Most automatic memories kept (default 2000).
    pub max_auto: Option<u32>,
    /// Output tokens of one extraction (default 2048).
    pub max_tokens: Option<u32>,
    /// Seconds one extraction call may take (default 120).
    pub timeout_secs: Option<u64>,
}

/// `[memory]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMemory {
    pub consolidation: Option<RawConsolidation>,
}

/// `[memory.consolidation]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConsolidation {
    /// Default: on when auto memory runs.
    pub enabled: Option<bool>,
    /// A `[providers.<name>]` entry; default: auto memory's endpoint.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// At most one run per this many hours, after an auto-memory run (default 24; 0: every run).
    pub interval_hours: Option<u32>,
    /// Most memories shown to the model (default 300, newest first).
    pub max_candidates: Option<u32>,
    /// Output tokens of one plan (default 4096).
    pub max_tokens: Option<u32>,
    /// Seconds one call may take (default 180).
    pub timeout_secs: Option<u64>,
}

/// `[summary]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSummary {
    /// Default: off.
    pub enabled: Option<bool>,
    /// A `[providers.<name>]` entry; default: the `[titles]` endpoint.
    pub provider: Option<String>,
    /// Default: the `[titles]` model, or the provider's default model.
    pub model: Option<String>,
    /// Output tokens of one rewrite (default 1024).
    pub max_tokens: Option<u32>,
    /// Seconds one rewrite call may take (default 60).
    pub timeout_secs: Option<u64>,
    /// Rounds folded since the last rewrite before the next one (default 1).
    pub min_new_rounds: Option<u32>,
}

/// `[embeddings]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmbeddings {
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    /// Vector length to ask for (endpoints that take `dimensions`).
    pub dimensions: Option<u32>,
    /// `"auto"` (the default), `"plain"`, `"e5"` or `"input_type"`.
    pub input_style: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    /// Seconds one embeddings request may take (default 30).
    pub timeout_secs: Option<u64>,
    /// Milliseconds the per-turn recall waits for the query's vector (default 300).
    pub recall_budget_ms: Option<u64>,
    /// Cosine below which a hit found only by meaning is dropped (default by model).
    pub min_similarity: Option<f64>,
}

impl RawConfig {
    /// Parses TOML text. The error names the offending key; its `Display` quotes the source line,
    /// so callers that may show it should use [`super::ConfigError`] (via `Config::load`) instead.
    pub fn parse(text: &str) -> Result<RawConfig, toml::de::Error> {
        toml::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seed_shapes() {
        let raw = RawConfig::parse(
            r#"
[telegram]
token = "t"
allowed_user = 42

[providers.anthropic]
type = "claude"
max_tokens = 16384
headers = { User-Agent = "ua" }

[cli.codex]
command = "codex"
args = ["exec"]

[[mcp.servers]]
name = "exa"
type = "http"
url = "https://mcp.exa.ai/mcp"
"#,
        )
        .unwrap();
        assert_eq!(raw.telegram.allowed_user, Some(42));
        let p = &raw.providers["anthropic"];
        assert_eq!(p.kind.as_deref(), Some("claude"));
        assert_eq!(p.headers.as_ref().unwrap()["User-Agent"], "ua");
        assert_eq!(
            raw.cli["codex"].args.as_deref(),
            Some(&["exec".to_owned()][..])
        );
        assert_eq!(raw.mcp.servers[0].name.as_deref(), Some("exa"));
        assert!(raw.titles.is_none());
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = RawConfig::parse("[providers.a]\napi_ky = \"x\"\n").unwrap_err();
        assert!(err.message().contains("api_ky"), "{}", err.message());
        let err = RawConfig::parse("[genral]\n").unwrap_err();
        assert!(err.message().contains("genral"), "{}", err.message());
    }
}
