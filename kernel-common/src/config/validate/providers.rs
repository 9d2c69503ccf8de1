//! `[providers.*]`, `general.default_provider` and `[titles]`: the model endpoints, their keys
//! and their refusals.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Ctx, given, placeholder_note};
use crate::config::context::{ContextLimits, ModelPrice};
use crate::config::env::{TITLES_API_KEY_ENV, provider_key_env};
use crate::config::images::{
    ImageLimits, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MIN_IMAGE_BYTES, MIN_IMAGE_SIDE,
};
use crate::config::raw::{RawConfig, RawProvider, RawTitles};
use crate::config::{
    Component, GeneralConfig, ProviderConfig, ProviderKind, TITLES_PROVIDER, TitlesConfig,
};
use crate::secret::Secret;

/// `stream_idle_timeout_secs` when not set.
const DEFAULT_IDLE_SECS: u64 = 120;
/// `first_byte_timeout_secs` when not set: reasoning models may think for minutes first.
const DEFAULT_FIRST_BYTE_SECS: u64 = 300;
/// The longest `first_byte_timeout_secs` / `stream_idle_timeout_secs` accepted (an hour).
const MAX_TIMEOUT_SECS: u64 = 3_600;
/// `titles.max_tokens` for `openai_compat` when not set: a title is a few words.
const DEFAULT_TITLE_MAX_TOKENS: u32 = 100;
/// The smallest context window accepted (anything smaller cannot hold the system prompt).
const MIN_CONTEXT_TOKENS: u32 = 4_096;
/// The OpenAI API (also the `[stt]` / `[tts]` endpoint when not set).
pub(super) const OPENAI_BASE: &str = "https://api.openai.com/v1";

/// The default `api_base` of a kind.
pub(super) fn default_api_base(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Claude => "https://api.anthropic.com",
        ProviderKind::OpenAiCompat => OPENAI_BASE,
    }
}

/// Every well-formed provider; malformed ones are left out with a problem each.
pub(super) fn providers(
    ctx: &mut Ctx<'_>,
    raw: &BTreeMap<String, RawProvider>,
) -> BTreeMap<String, ProviderConfig> {
    if raw.is_empty() {
        ctx.refuse_for(
            Component::Agentd,
            "no provider is configured: add a [providers.<name>] section (see config.example.toml)",
        );
    }
    raw.iter()
        .filter_map(|(name, p)| provider(ctx, name, p).map(|p| (name.clone(), p)))
        .collect()
}

fn provider(ctx: &mut Ctx<'_>, name: &str, raw: &RawProvider) -> Option<ProviderConfig> {
    let key = format!("providers.{name}");
    let kind = kind(ctx, &format!("{key}.type"), raw.kind.as_deref());
    let default_model = given(raw.default_model.as_deref()).map(|m| m.trim().to_owned());
    if default_model.is_none() {
        ctx.refuse(format!(
            "{key}.default_model is missing: name the model to use, e.g. default_model = \"gpt-4o\""
        ));
    }
    let models = models(ctx, &key, raw.models.as_deref(), default_model.as_deref());
    let max_tokens = raw.max_tokens;
    if max_tokens == Some(0) {
        ctx.refuse(format!(
            "{key}.max_tokens must be at least 1: set what the model allows"
        ));
    }
    if kind == Some(ProviderKind::Claude) && max_tokens.is_none() {
        ctx.refuse_for(
            Component::Agentd,
            format!(
                "{key}.max_tokens is missing: the Anthropic Messages API requires it; set e.g. \
                 max_tokens = 16384 (what the model allows)"
            ),
        );
    }
    let idle = raw.stream_idle_timeout_secs.unwrap_or(DEFAULT_IDLE_SECS);
    if idle == 0 || idle > MAX_TIMEOUT_SECS {
        ctx.refuse(format!(
            "{key}.stream_idle_timeout_secs = {idle} is out of range: use 1 to {MAX_TIMEOUT_SECS} \
             seconds (default {DEFAULT_IDLE_SECS})"
        ));
    }
    let first_byte = raw
        .first_byte_timeout_secs
        .unwrap_or(DEFAULT_FIRST_BYTE_SECS);
    if first_byte == 0 || first_byte > MAX_TIMEOUT_SECS {
        ctx.refuse(format!(
            "{key}.first_byte_timeout_secs = {first_byte} is out of range: use 1 to \
             {MAX_TIMEOUT_SECS} seconds (default {DEFAULT_FIRST_BYTE_SECS})"
        ));
    }
    let retry = super::retry::retry(ctx, &key, raw.retry.as_ref());
    let headers = headers(ctx, &key, raw.headers.as_ref());
    let context = context_limits(ctx, &key, raw);
    let thinking =
        super::thinking::thinking(ctx, &key, kind, max_tokens, &models, raw.thinking.as_ref());
    let images = image_limits(ctx, &key, raw);
    let kind = kind?;
    let api_base = ctx.url(
        &format!("{key}.api_base"),
        raw.api_base.as_deref(),
        default_api_base(kind),
    );
    Some(ProviderConfig {
        name: name.to_owned(),
        kind,
        api_base,
        api_key: ctx.secret(raw.api_key.as_deref(), &provider_key_env(name)),
        max_tokens,
        default_model: default_model?,
        models,
        headers,
        stream_idle_timeout: Duration::from_secs(idle),
        first_byte_timeout: Duration::from_secs(first_byte),
        retry,
        context,
        thinking,
        images,
    })
}

/// `max_image_bytes` and `max_image_side_px`, refused outside their sensible ranges.
fn image_limits(ctx: &mut Ctx<'_>, key: &str, raw: &RawProvider) -> ImageLimits {
    if let Some(n) = raw.max_image_bytes
        && !(MIN_IMAGE_BYTES..=MAX_IMAGE_BYTES).contains(&n)
    {
        ctx.refuse(format!(
            "{key}.max_image_bytes = {n} is out of range: use {MIN_IMAGE_BYTES} to \
             {MAX_IMAGE_BYTES} (the largest image the provider takes, in bytes)"
        ));
    }
    if let Some(n) = raw.max_image_side_px
        && !(MIN_IMAGE_SIDE..=MAX_IMAGE_SIDE).contains(&n)
    {
        ctx.refuse(format!(
            "{key}.max_image_side_px = {n} is out of range: use {MIN_IMAGE_SIDE} to \
             {MAX_IMAGE_SIDE} (the most pixels a side of an image the provider takes)"
        ));
    }
    ImageLimits {
        max_bytes: raw.max_image_bytes,
        max_side: raw.max_image_side_px,
    }
}

/// `context_tokens`, `reserve_output_tokens`, `model_context_tokens` and `prices`.
fn context_limits(ctx: &mut Ctx<'_>, key: &str, raw: &RawProvider) -> ContextLimits {
    let mut check = |what: &str, n: Option<u32>| {
        if n.is_some_and(|n| n < MIN_CONTEXT_TOKENS) {
            ctx.refuse(format!(
                "{key}.{what} must be at least {MIN_CONTEXT_TOKENS}: set the model's context window in tokens, e.g. 128000"
            ));
        }
    };
    check("context_tokens", raw.context_tokens);
    let per_model = raw.model_context_tokens.clone().unwrap_or_default();
    for (model, n) in &per_model {
        check(&format!("model_context_tokens.\"{model}\""), Some(*n));
    }
    if let (Some(reserve), Some(window)) = (raw.reserve_output_tokens, raw.context_tokens)
        && reserve >= window
    {
        ctx.refuse(format!(
            "{key}.reserve_output_tokens ({reserve}) must be below context_tokens ({window})"
        ));
    }
    let mut prices = BTreeMap::new();
    for (model, p) in raw.prices.iter().flatten() {
        let values = [p.input, p.output, p.cache_read, p.cache_write];
        if values.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
            ctx.refuse(format!(
                "{key}.prices.\"{model}\": prices must be zero or more (USD per million tokens)"
            ));
            continue;
        }
        let input = p.input.unwrap_or(0.0);
        prices.insert(
            model.clone(),
            ModelPrice {
                input,
                output: p.output.unwrap_or(0.0),
                cache_read: p.cache_read.unwrap_or(input),
                cache_write: p.cache_write.unwrap_or(input),
            },
        );
    }
    ContextLimits {
        context_tokens: raw.context_tokens,
        reserve_output_tokens: raw.reserve_output_tokens,
        model_context_tokens: per_model,
        prices,
    }
}

/// `type`: required, `claude` or `openai_compat`.
fn kind(ctx: &mut Ctx<'_>, key: &str, value: Option<&str>) -> Option<ProviderKind> {
    match given(value).map(str::trim) {
        Some("claude") => Some(ProviderKind::Claude),
        Some("openai_compat") => Some(ProviderKind::OpenAiCompat),
        Some(other) => {
            ctx.refuse(format!(
                "{key} = \"{other}\" is unknown: use \"claude\" or \"openai_compat\""
            ));
            None
        }
        None => {
            ctx.refuse(format!(
                "{key} is missing: set type = \"claude\" or type = \"openai_compat\""
            ));
            None
        }
    }
}

/// `models`, deduplicated, always containing `default_model` (first when it was absent).
fn models(
    ctx: &mut Ctx<'_>,
    key: &str,
    raw: Option<&[String]>,
    default: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, m) in raw.unwrap_or_default().iter().enumerate() {
        let m = m.trim();
        if m.is_empty() {
            ctx.refuse(format!(
                "{key}.models[{i}] is empty: remove it or name a model"
            ));
        } else if !out.iter().any(|o| o == m) {
            out.push(m.to_owned());
        }
    }
    if let Some(d) = default
        && !out.iter().any(|o| o == d)
    {
        out.insert(0, d.to_owned());
    }
    out
}

/// Extra HTTP headers: names must be header tokens, values must not contain line breaks.
pub(super) fn headers(
    ctx: &mut Ctx<'_>,
    key: &str,
    raw: Option<&BTreeMap<String, String>>,
) -> BTreeMap<String, Secret> {
    let mut out = BTreeMap::new();
    for (name, value) in raw.into_iter().flatten() {
        let token_char = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token_char) {
            ctx.refuse(format!(
                "{key}.headers: \"{name}\" is not a valid HTTP header name (letters, digits, `-`)"
            ));
        } else if value.chars().any(|c| c.is_control() && c != '\t') {
            ctx.refuse(format!(
                "{key}.headers.{name}: the value contains a line break or control character"
            ));
        } else {
            out.insert(name.clone(), Secret::new(value.clone()));
        }
    }
    out
}

/// `[providers.*]`, with `general.default_provider` and `general.fallback_providers` chosen
/// among them (set in `general`) and the default's key checked.
pub(super) fn with_choice(
    ctx: &mut Ctx<'_>,
    raw: &RawConfig,
    general: &mut GeneralConfig,
) -> BTreeMap<String, ProviderConfig> {
    let providers = providers(ctx, &raw.providers);
    general.default_provider =
        default_provider(ctx, raw.general.default_provider.as_deref(), &raw.providers);
    general.fallback_providers = fallback_providers(
        ctx,
        raw.general.fallback_providers.as_deref(),
        &raw.providers,
    );
    check_default_key(ctx, &general.default_provider, &providers, &raw.providers);
    providers
}

/// `general.default_provider`: must name a configured provider; may be left out when there is
/// exactly one.
pub(super) fn default_provider(
    ctx: &mut Ctx<'_>,
    raw: Option<&str>,
    providers: &BTreeMap<String, RawProvider>,
) -> String {
    let names = providers
        .keys()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ");
    match given(raw).map(str::trim) {
        Some(name) => {
            if !providers.contains_key(name) && !providers.is_empty() {
                ctx.refuse_for(
                    Component::Agentd,
                    format!(
                        "general.default_provider = \"{name}\" is not a configured provider: use \
                         one of {names}, or add a [providers.{name}] section"
                    ),
                );
            }
            name.to_owned()
        }
        None if providers.len() == 1 => providers.keys().next().cloned().unwrap_or_default(),
        None => {
            if providers.len() > 1 {
                ctx.refuse_for(
                    Component::Agentd,
                    format!("general.default_provider is missing: set it to one of {names}"),
                );
            }
            providers.keys().next().cloned().unwrap_or_default()
        }
    }
}

/// `general.fallback_providers`: each must name a configured provider, once.
pub(super) fn fallback_providers(
    ctx: &mut Ctx<'_>,
    raw: Option<&[String]>,
    providers: &BTreeMap<String, RawProvider>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in raw.unwrap_or_default().iter().map(|n| n.trim()) {
        if !providers.contains_key(name) {
            let names = providers
                .keys()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ");
            ctx.refuse_for(
                Component::Agentd,
                format!(
                    "general.fallback_providers names \"{name}\", which is not a configured \
                     provider: use {names}, or add a [providers.{name}] section"
                ),
            );
        } else if out.iter().any(|n| n == name) {
            ctx.refuse_for(
                Component::Agentd,
                format!("general.fallback_providers names \"{name}\" twice"),
            );
        } else {
            out.push(name.to_owned());
        }
    }
    out
}

/// The default provider needs a key; others without one are merely unavailable.
pub(super) fn check_default_key(
    ctx: &mut Ctx<'_>,
    default: &str,
    providers: &BTreeMap<String, ProviderConfig>,
    raw: &BTreeMap<String, RawProvider>,
) {
    for name in providers
        .iter()
        .filter(|(_, p)| !p.available())
        .map(|(n, _)| n)
    {
        let env = provider_key_env(name);
        if name == default {
            let note = placeholder_note(raw.get(name).and_then(|r| r.api_key.as_deref()));
            ctx.refuse_for(
                Component::Agentd,
                format!(
                    "providers.{name}.api_key is missing for the default provider{note}: set \
                     providers.{name}.api_key or {env}"
                ),
            );
        } else {
            ctx.warn_for(
                Component::Agentd,
                format!(
                    "providers.{name} has no api_key (set providers.{name}.api_key or {env}): it is \
                     unavailable until then"
                ),
            );
        }
    }
}

/// `[titles]`: its own endpoint. `None` when malformed (with a problem) .
pub(super) fn titles(ctx: &mut Ctx<'_>, raw: &RawTitles) -> Option<TitlesConfig> {
    let kind = kind(ctx, "titles.type", raw.kind.as_deref());
    let model = given(raw.model.as_deref()).map(|m| m.trim().to_owned());
    if model.is_none() {
        ctx.refuse(
            "titles.model is missing: name a cheap, fast model, e.g. model = \"gpt-4o-mini\"",
        );
    }
    if raw.max_tokens == Some(0) {
        ctx.refuse("titles.max_tokens must be at least 1: set e.g. max_tokens = 100");
    }
    if kind == Some(ProviderKind::Claude) && raw.max_tokens.is_none() {
        ctx.refuse_for(
            Component::Agentd,
            "titles.max_tokens is missing: the Anthropic Messages API requires it; set e.g. \
             max_tokens = 100",
        );
    }
    let headers = headers(ctx, "titles", raw.headers.as_ref());
    let retry = super::retry::retry(ctx, "titles", raw.retry.as_ref());
    let api_key = ctx.secret(raw.api_key.as_deref(), TITLES_API_KEY_ENV);
    if api_key.is_none() {
        ctx.warn_for(
            Component::Agentd,
            format!(
                "titles.api_key is missing{}: set titles.api_key or {TITLES_API_KEY_ENV}; until \
                 then no titles are generated",
                placeholder_note(raw.api_key.as_deref())
            ),
        );
    }
    let kind = kind?;
    Some(TitlesConfig {
        provider: TITLES_PROVIDER.to_owned(),
        kind,
        api_base: ctx.url(
            "titles.api_base",
            raw.api_base.as_deref(),
            default_api_base(kind),
        ),
        api_key,
        model: model?,
        max_tokens: raw.max_tokens.unwrap_or(DEFAULT_TITLE_MAX_TOKENS),
        headers,
        retry,
    })
}
