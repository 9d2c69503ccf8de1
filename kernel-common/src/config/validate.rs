//! Stage two: from `RawConfig` to a validated `Config` (env overrides, paths, refusals).
//!
//! Every problem is collected, so one run tells the owner everything to fix; each message names
//! the key and says how to fix it. Secrets never appear in a message.

mod agentd;
mod approvals;
mod backup;
mod budget;
mod cheap_model;
mod consolidation;
mod embeddings;
mod mcp;
mod memory_auto;
mod pipe;
mod providers;
mod retry;
mod speech;
mod summary_rewrite;
mod thinking;
mod watch;
mod web;

use std::collections::BTreeMap;
use std::path::{Component as PathPart, Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use super::env::TELEGRAM_TOKEN_ENV;
use super::raw::{RawCli, RawConfig, RawGeneral, RawTelegram};
use super::{
    CliConfig, Component, Config, ConsolidationConfig, GeneralConfig, Locale, MemoryAutoConfig,
    ProviderConfig, SummaryRewriteConfig, TelegramConfig, TitlesConfig,
};
use crate::secret::Secret;

/// Why a config cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    /// Not valid TOML, or a key the schema does not know. `line`/`column` are 1-based.
    #[error("{path}{}: {message}", location(.line, .column))]
    Parse {
        path: String,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    /// Valid TOML that cannot run; every problem found, each saying how to fix it.
    #[error("the configuration cannot be used:\n{}", bullets(.problems))]
    Invalid { problems: Vec<String> },
}

fn location(line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" line {l}, column {c}"),
        _ => String::new(),
    }
}

fn bullets(problems: &[String]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Default `general.timezone`, as in the seed plan.
const DEFAULT_TIMEZONE: &str = "Asia/Shanghai";
/// The `allowed_user` the example config ships with.
const EXAMPLE_USER_ID: i64 = 123_456_789;

pub(super) fn load(
    path: &Path,
    component: Component,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = std::fs::read_to_string(&path).map_err(|e| read_error(&path, &e))?;
    let raw = parse(&path, &text)?;
    build(raw, path, component, env)
}

fn read_error(path: &Path, e: &std::io::Error) -> ConfigError {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => {
            "; copy config.example.toml there and fill it in, or point --config or KERNEL_CONFIG \
             at your config"
        }
        _ => "",
    };
    ConfigError::Read {
        path: path.display().to_string(),
        message: format!("{e}{hint}"),
    }
}

/// Parses `text`, turning toml's error into one that names line, column and key but never quotes
/// the source line (it may hold a secret).
fn parse(path: &Path, text: &str) -> Result<RawConfig, ConfigError> {
    RawConfig::parse(text).map_err(|e| {
        let (line, column) = match e.span() {
            Some(span) => {
                let (l, c) = line_column(text, span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        let mut bare = e.clone();
        bare.set_input(None);
        let message = bare.to_string().trim().replace('\n', " ");
        let message = QUOTED_VALUE.replace_all(&message, "a string").into_owned();
        ConfigError::Parse {
            path: path.display().to_string(),
            line,
            column,
            message,
        }
    })
}

/// serde quotes offending string values (`invalid type: string "sk-…"`): never echo them.
static QUOTED_VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"string "(?:[^"\\]|\\.)*""#).expect("valid regex"));

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Problems and warnings gathered while building, plus what every step needs.
pub(super) struct Ctx<'a> {
    component: Component,
    env: &'a dyn Fn(&str) -> Option<String>,
    base_dir: PathBuf,
    problems: Vec<String>,
    warnings: Vec<String>,
}

impl Ctx<'_> {
    /// A problem that stops every component.
    fn refuse(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    /// A problem only when loading for `component`.
    fn refuse_for(&mut self, component: Component, problem: impl Into<String>) {
        if self.component == component {
            self.problems.push(problem.into());
        }
    }

    /// A warning only when loading for `component`.
    fn warn_for(&mut self, component: Component, warning: impl Into<String>) {
        if self.component == component {
            self.warnings.push(warning.into());
        }
    }

    /// A secret from `env_name` (wins) or the file; empty and placeholder values are missing.
    fn secret(&self, file: Option<&str>, env_name: &str) -> Option<Secret> {
        let from_env = (self.env)(env_name).filter(|v| !v.trim().is_empty());
        let value = from_env.or_else(|| {
            given(file)
                .filter(|v| !is_placeholder(v))
                .map(str::to_owned)
        });
        value.map(|v| Secret::new(v.trim()))
    }

    /// `value` (default `default`) resolved against the config file's folder.
    fn path(&self, value: Option<&str>, default: &str) -> PathBuf {
        resolve(&self.base_dir, given(value).unwrap_or(default))
    }

    /// An `http(s)` base URL without trailing `/`.
    fn url(&mut self, key: &str, value: Option<&str>, default: &str) -> String {
        let url = given(value)
            .unwrap_or(default)
            .trim()
            .trim_end_matches('/')
            .to_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            self.refuse(format!(
                "{key} must be an http:// or https:// URL: set it like {key} = \"{default}\""
            ));
        }
        url
    }
}

impl Ctx<'_> {
    /// `secs` as a timeout, or (with a problem naming `key`) `default` when it is outside
    /// 1..=[`MAX_TIMEOUT_SECS`](super::MAX_TIMEOUT_SECS).
    fn timeout_secs(&mut self, key: &str, secs: u64, default: Duration) -> Duration {
        if (1..=super::MAX_TIMEOUT_SECS).contains(&secs) {
            return Duration::from_secs(secs);
        }
        self.refuse(format!(
            "{key} = {secs} must be between 1 and {} seconds (default {})",
            super::MAX_TIMEOUT_SECS,
            default.as_secs()
        ));
        default
    }
}

/// The value, unless absent or blank.
fn given(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.trim().is_empty())
}

/// The example config's secrets end in `...` (`"sk-ant-..."`): such a value was never filled in.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    v.ends_with("...") || v.ends_with('…')
}

/// " (it still holds the example placeholder)" when the file value is one.
fn placeholder_note(file: Option<&str>) -> &'static str {
    match file {
        Some(v) if is_placeholder(v) => " (it still holds the example placeholder)",
        _ => "",
    }
}

/// `base/value`, with `.` parts dropped; absolute values stay as they are.
fn resolve(base: &Path, value: &str) -> PathBuf {
    base.join(value)
        .components()
        .filter(|c| !matches!(c, PathPart::CurDir))
        .collect()
}

fn build(
    raw: RawConfig,
    path: PathBuf,
    component: Component,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let base_dir = path
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let mut ctx = Ctx {
        component,
        env,
        base_dir: base_dir.clone(),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let telegram = telegram(&mut ctx, &raw.telegram);
    let mut general = general(&mut ctx, &raw.general);
    let providers = providers::with_choice(&mut ctx, &raw, &mut general);
    let titles = raw
        .titles
        .as_ref()
        .and_then(|t| providers::titles(&mut ctx, t));
    let stt = raw.stt.as_ref().map(|s| speech::stt(&mut ctx, s));
    let tts = raw.tts.as_ref().and_then(|t| speech::tts(&mut ctx, t));
    let embeddings = raw
        .embeddings
        .as_ref()
        .and_then(|e| embeddings::embeddings(&mut ctx, e));
    let cli = cli(&mut ctx, &raw.cli);
    let (mcp_servers, skipped_mcp) = mcp::servers(&mut ctx, &raw.mcp.servers);
    let agentd = agentd::agentd(&mut ctx, &raw.agentd, &general.data_dir);
    let (memory_auto, memory_consolidation, summary_rewrite) =
        cheap_model_jobs(&mut ctx, &raw, titles.as_ref(), &providers);
    let approvals = approvals::approvals(&mut ctx, raw.approvals.as_ref());
    let budget = budget::budget(&mut ctx, raw.budget.as_ref(), &providers);
    let web = web::web(&mut ctx, raw.web.as_ref());
    let backup = backup::backup(&mut ctx, raw.backup.as_ref(), &general.data_dir);
    let watch = watch::watch(&mut ctx, raw.watch.as_ref(), titles.as_ref());
    if !ctx.problems.is_empty() {
        return Err(ConfigError::Invalid {
            problems: ctx.problems,
        });
    }
    Ok(Config {
        path,
        base_dir,
        telegram,
        general,
        providers,
        titles,
        cli,
        mcp_servers,
        skipped_mcp,
        agentd,
        stt,
        tts,
        memory_auto,
        memory_consolidation,
        summary_rewrite,
        embeddings,
        approvals,
        budget,
        web,
        backup,
        watch,
        secret_env: super::env::referenced_vars(&raw.mcp.servers),
        warnings: ctx.warnings,
    })
}

/// The background jobs on a cheap model: auto memory, memory consolidation (which needs auto
/// memory's) and the summary rewrite.
fn cheap_model_jobs(
    ctx: &mut Ctx<'_>,
    raw: &RawConfig,
    titles: Option<&TitlesConfig>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> (MemoryAutoConfig, ConsolidationConfig, SummaryRewriteConfig) {
    let memory_auto = memory_auto::memory_auto(ctx, raw.memory_auto.as_ref(), titles, providers);
    let memory_consolidation = consolidation::consolidation(
        ctx,
        raw.memory.as_ref().and_then(|m| m.consolidation.as_ref()),
        &memory_auto,
        titles,
        providers,
    );
    let summary_rewrite =
        summary_rewrite::summary_rewrite(ctx, raw.summary.as_ref(), titles, providers);
    (memory_auto, memory_consolidation, summary_rewrite)
}

fn telegram(ctx: &mut Ctx<'_>, raw: &RawTelegram) -> TelegramConfig {
    let token = ctx.secret(raw.token.as_deref(), TELEGRAM_TOKEN_ENV);
    if token.is_none() {
        ctx.refuse_for(
            Component::Tg,
            format!(
                "telegram.token is missing{}: set telegram.token or {TELEGRAM_TOKEN_ENV}; get a \
                 token from @BotFather",
                placeholder_note(raw.token.as_deref())
            ),
        );
    }
    let hint = "set it to your numeric Telegram user id; message @userinfobot to find it";
    let allowed_user = match raw.allowed_user {
        Some(id) if id > 0 => {
            if id == EXAMPLE_USER_ID {
                ctx.warn_for(
                    Component::Tg,
                    format!("telegram.allowed_user is still the example id {id}: {hint}"),
                );
            }
            Some(id)
        }
        Some(id) => {
            ctx.refuse_for(
                Component::Tg,
                format!("telegram.allowed_user = {id} is not a user id: {hint}"),
            );
            None
        }
        None => {
            ctx.refuse_for(
                Component::Tg,
                format!("telegram.allowed_user is missing: {hint}"),
            );
            None
        }
    };
    let api_url = ctx.url(
        "telegram.api_url",
        raw.api_url.as_deref(),
        "https://api.telegram.org",
    );
    TelegramConfig {
        token,
        allowed_user,
        api_url,
        live_preview: raw.live_preview.unwrap_or(true),
        show_reasoning: raw.show_reasoning.unwrap_or(false),
        show_cost: raw.show_cost.unwrap_or(false),
        intake_wait: ctx.timeout_secs(
            "telegram.intake_wait_secs",
            raw.intake_wait_secs
                .unwrap_or(super::DEFAULT_INTAKE_WAIT_SECS),
            Duration::from_secs(super::DEFAULT_INTAKE_WAIT_SECS),
        ),
        max_backlog_age: backlog_age(ctx, raw.max_backlog_age_secs),
        ack_reaction: ack_reaction(ctx, raw.ack_reaction.as_deref()),
        edit_window: edit_window(ctx, raw.edit_window_hours),
        topics: topics(ctx, raw.topics.as_deref()),
    }
}

/// `telegram.topics`: "auto" (default) or "off".
fn topics(ctx: &mut Ctx<'_>, value: Option<&str>) -> bool {
    match value.map(str::trim) {
        None | Some("auto") => true,
        Some("off") => false,
        Some(other) => {
            ctx.refuse_for(
                Component::Tg,
                format!("telegram.topics = {other:?} is not \"auto\" or \"off\""),
            );
            true
        }
    }
}

/// `telegram.ack_reaction`: one emoji (at most 16 characters, no spaces); empty turns it off.
fn ack_reaction(ctx: &mut Ctx<'_>, value: Option<&str>) -> Option<String> {
    let value = value.unwrap_or(super::DEFAULT_ACK_REACTION).trim();
    if value.is_empty() {
        return None;
    }
    if value.chars().count() > 16 || value.chars().any(|c| c.is_whitespace() || c.is_ascii()) {
        ctx.refuse_for(
            Component::Tg,
            format!(
                "telegram.ack_reaction = {value:?} is not one emoji: use one of Telegram's reaction \
                 emojis (\"👀\", \"👍\", …) or \"\" to turn it off"
            ),
        );
        return None;
    }
    Some(value.to_owned())
}

/// `telegram.edit_window_hours`: 1 to 720 (30 days).
fn edit_window(ctx: &mut Ctx<'_>, hours: Option<u64>) -> Duration {
    let hours = hours.unwrap_or(super::DEFAULT_EDIT_WINDOW_HOURS);
    if (1..=720).contains(&hours) {
        return Duration::from_secs(hours * 3600);
    }
    ctx.refuse_for(
        Component::Tg,
        format!("telegram.edit_window_hours = {hours} is out of range: use 1–720"),
    );
    Duration::from_secs(super::DEFAULT_EDIT_WINDOW_HOURS * 3600)
}

/// `telegram.max_backlog_age_secs`: 60 s to 7 days.
fn backlog_age(ctx: &mut Ctx<'_>, secs: Option<u64>) -> Duration {
    let default = super::DEFAULT_MAX_BACKLOG_AGE_SECS;
    let secs = secs.unwrap_or(default);
    if (60..=super::MAX_BACKLOG_AGE_SECS).contains(&secs) {
        return Duration::from_secs(secs);
    }
    ctx.refuse_for(
        Component::Tg,
        format!(
            "telegram.max_backlog_age_secs = {secs} must be between 60 and {} seconds (default {default}, 24 h)",
            super::MAX_BACKLOG_AGE_SECS
        ),
    );
    Duration::from_secs(default)
}

fn general(ctx: &mut Ctx<'_>, raw: &RawGeneral) -> GeneralConfig {
    let tz_name = given(raw.timezone.as_deref())
        .unwrap_or(DEFAULT_TIMEZONE)
        .trim();
    let timezone = tz_name.parse::<chrono_tz::Tz>().unwrap_or_else(|_| {
        ctx.refuse(format!(
            "general.timezone = \"{tz_name}\" is not an IANA time zone name: use e.g. \
             \"{DEFAULT_TIMEZONE}\" or \"UTC\""
        ));
        chrono_tz::Tz::UTC
    });
    let context_rounds = raw.context_rounds.unwrap_or(50);
    if context_rounds == 0 {
        ctx.refuse("general.context_rounds must be at least 1: set e.g. context_rounds = 50");
    }
    let locale = match given(raw.locale.as_deref()).map(str::trim) {
        None | Some("zh") => Locale::Zh,
        Some("en") => Locale::En,
        Some(other) => {
            ctx.refuse(format!(
                "general.locale = \"{other}\" is unknown: use \"zh\" or \"en\""
            ));
            Locale::default()
        }
    };
    let ask_timeout_secs = raw.ask_timeout_secs.unwrap_or(600);
    if ask_timeout_secs == 0 || ask_timeout_secs > 86_400 {
        ctx.refuse("general.ask_timeout_secs must be between 1 and 86400 seconds (default 600)");
    }
    let max_parallel_turns = raw.max_parallel_turns.unwrap_or(3);
    if max_parallel_turns == 0 || max_parallel_turns > 32 {
        ctx.refuse(format!(
            "general.max_parallel_turns = {max_parallel_turns} is out of range: use 1 to 32 \
             (default 3)"
        ));
    }
    GeneralConfig {
        timezone,
        max_parallel_turns: max_parallel_turns.clamp(1, 32) as usize,
        default_provider: String::new(),
        fallback_providers: Vec::new(),
        default_workspace: ctx.path(raw.default_workspace.as_deref(), "."),
        context_rounds: context_rounds as usize,
        memory_recall_k: raw.memory_recall_k.unwrap_or(5) as usize,
        data_dir: ctx.path(raw.data_dir.as_deref(), "data"),
        locale,
        soul_file: ctx.path(raw.soul_file.as_deref(), "SOUL.md"),
        skills_dir: ctx.path(raw.skills_dir.as_deref(), "skills"),
        ask_timeout: std::time::Duration::from_secs(ask_timeout_secs),
    }
}

fn cli(
    ctx: &mut Ctx<'_>,
    raw: &std::collections::BTreeMap<String, RawCli>,
) -> std::collections::BTreeMap<String, CliConfig> {
    let mut out = std::collections::BTreeMap::new();
    for (name, entry) in raw {
        let Some(command) = given(entry.command.as_deref()) else {
            ctx.refuse(format!(
                "cli.{name}.command is missing: set it to the executable, e.g. command = \"claude\""
            ));
            continue;
        };
        let args = entry.args.clone().unwrap_or_default();
        let timeout = match entry.timeout_secs {
            None => super::DEFAULT_CLI_TIMEOUT,
            Some(secs @ 1..=super::MAX_CLI_TIMEOUT_SECS) => std::time::Duration::from_secs(secs),
            Some(_) => {
                ctx.refuse(format!(
                    "cli.{name}.timeout_secs must be between 1 and {} seconds (default 600)",
                    super::MAX_CLI_TIMEOUT_SECS
                ));
                continue;
            }
        };
        let cli = CliConfig {
            name: name.clone(),
            command: command.trim().to_owned(),
            args,
            timeout,
        };
        out.insert(name.clone(), cli);
    }
    out
}

#[cfg(test)]
mod tests;
