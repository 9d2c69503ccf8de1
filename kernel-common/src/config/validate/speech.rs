//! `[stt]` and `[tts]`: the speech endpoints for voice notes in and voice replies out.

use super::providers::{OPENAI_BASE, headers};
use super::{Ctx, given};
use crate::config::env::{STT_API_KEY_ENV, TTS_API_KEY_ENV};
use crate::config::raw::{RawStt, RawTts};
use crate::config::{
    Component, DEFAULT_STT_TIMEOUT, DEFAULT_TTS_MAX_CHARS, DEFAULT_TTS_TIMEOUT, EDGE_TTS_BASE,
    MAX_TTS_MAX_CHARS, SttConfig, TtsConfig, TtsKind,
};

/// The most characters OpenAI's `/audio/speech` accepts in one request.
const OPENAI_SPEECH_LIMIT: usize = 4096;

/// `[stt]`: OpenAI-compatible transcription; model defaults to `whisper-1`.
pub(super) fn stt(ctx: &mut Ctx<'_>, raw: &RawStt) -> SttConfig {
    let timeout = raw.timeout_secs.map_or(DEFAULT_STT_TIMEOUT, |secs| {
        ctx.timeout_secs("stt.timeout_secs", secs, DEFAULT_STT_TIMEOUT)
    });
    SttConfig {
        api_base: ctx.url("stt.api_base", raw.api_base.as_deref(), OPENAI_BASE),
        api_key: ctx.secret(raw.api_key.as_deref(), STT_API_KEY_ENV),
        model: given(raw.model.as_deref())
            .unwrap_or("whisper-1")
            .trim()
            .to_owned(),
        headers: headers(ctx, "stt", raw.headers.as_ref()),
        timeout,
    }
}

/// `[tts]`: `type = "openai_compat"` (default; model `tts-1`, voice `alloy`) or `"edge"` (no
/// key; voice `zh-CN-XiaoxiaoNeural`, `rate` and `pitch`), with the spoken length capped at
/// `max_chars`. `None` when malformed (with a problem).
pub(super) fn tts(ctx: &mut Ctx<'_>, raw: &RawTts) -> Option<TtsConfig> {
    let kind = tts_kind(ctx, raw.kind.as_deref());
    if kind == Some(TtsKind::Edge) {
        return edge(ctx, raw);
    }
    if raw.rate.is_some() || raw.pitch.is_some() {
        ctx.refuse("tts.rate and tts.pitch are for type = \"edge\" only");
    }
    let timeout = raw.timeout_secs.map_or(DEFAULT_TTS_TIMEOUT, |secs| {
        ctx.timeout_secs("tts.timeout_secs", secs, DEFAULT_TTS_TIMEOUT)
    });
    let max_chars = max_chars(ctx, raw.max_chars);
    let headers = headers(ctx, "tts", raw.headers.as_ref());
    let config = TtsConfig {
        kind: kind?,
        api_base: ctx.url("tts.api_base", raw.api_base.as_deref(), OPENAI_BASE),
        api_key: ctx.secret(raw.api_key.as_deref(), TTS_API_KEY_ENV),
        model: given(raw.model.as_deref())
            .unwrap_or("tts-1")
            .trim()
            .to_owned(),
        voice: given(raw.voice.as_deref())
            .unwrap_or("alloy")
            .trim()
            .to_owned(),
        rate: String::new(),
        pitch: String::new(),
        headers,
        max_chars: max_chars?,
        timeout,
    };
    if config.max_chars > OPENAI_SPEECH_LIMIT && config.api_base == OPENAI_BASE {
        ctx.warn_for(
            Component::Agentd,
            format!(
                "tts.max_chars = {} is more than OpenAI's /audio/speech accepts \
                 ({OPENAI_SPEECH_LIMIT}): long answers will get no voice reply; set \
                 max_chars = {OPENAI_SPEECH_LIMIT} or less",
                config.max_chars
            ),
        );
    }
    Some(config)
}

fn tts_kind(ctx: &mut Ctx<'_>, value: Option<&str>) -> Option<TtsKind> {
    match given(value).map(str::trim) {
        None | Some("openai_compat") => Some(TtsKind::OpenAiCompat),
        Some("edge") => Some(TtsKind::Edge),
        Some(other) => {
            ctx.refuse(format!(
                "tts.type = \"{other}\" is unknown: use \"openai_compat\" or \"edge\""
            ));
            None
        }
    }
}

/// `[tts] type = "edge"`: Microsoft Edge's read-aloud voices, no key. `api_base` (a `wss://` or,
/// for tests, `ws://` URL) defaults to [`EDGE_TTS_BASE`]; `model` and `api_key` are not used.
fn edge(ctx: &mut Ctx<'_>, raw: &RawTts) -> Option<TtsConfig> {
    let timeout = raw.timeout_secs.map_or(DEFAULT_TTS_TIMEOUT, |secs| {
        ctx.timeout_secs("tts.timeout_secs", secs, DEFAULT_TTS_TIMEOUT)
    });
    let max_chars = max_chars(ctx, raw.max_chars);
    let api_base = given(raw.api_base.as_deref())
        .unwrap_or(EDGE_TTS_BASE)
        .trim()
        .to_owned();
    if !(api_base.starts_with("wss://") || api_base.starts_with("ws://")) {
        ctx.refuse(format!(
            "tts.api_base must be a wss:// URL for type = \"edge\": leave it out for \
             {EDGE_TTS_BASE}"
        ));
    }
    if raw.api_key.is_some() || raw.model.is_some() || raw.headers.is_some() {
        ctx.refuse(
            "tts.api_key, tts.model and tts.headers are not used by type = \"edge\": remove them",
        );
    }
    let voice = given(raw.voice.as_deref())
        .unwrap_or("zh-CN-XiaoxiaoNeural")
        .trim();
    let voice_ok = voice.split('-').count() >= 3
        && voice.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !voice_ok {
        ctx.refuse(format!(
            "tts.voice = \"{voice}\" is not an Edge voice name: set it like \
             voice = \"zh-CN-XiaoxiaoNeural\""
        ));
    }
    let rate = signed(ctx, "tts.rate", raw.rate.as_deref(), "%", "+10%");
    let pitch = signed(ctx, "tts.pitch", raw.pitch.as_deref(), "Hz", "-5Hz");
    Some(TtsConfig {
        kind: TtsKind::Edge,
        api_base,
        api_key: None,
        model: String::new(),
        voice: voice.to_owned(),
        rate: rate?,
        pitch: pitch?,
        headers: Default::default(),
        max_chars: max_chars?,
        timeout,
    })
}

/// `value` as `+N<unit>` / `-N<unit>` (N at most 100 for `%`, 500 for `Hz`); `+0<unit>` when
/// not set.
fn signed(
    ctx: &mut Ctx<'_>,
    key: &str,
    value: Option<&str>,
    unit: &str,
    example: &str,
) -> Option<String> {
    let Some(value) = given(value).map(str::trim) else {
        return Some(format!("+0{unit}"));
    };
    let max = if unit == "%" { 100 } else { 500 };
    let n = value
        .strip_suffix(unit)
        .filter(|v| v.starts_with(['+', '-']))
        .and_then(|v| v[1..].parse::<u32>().ok())
        .filter(|n| *n <= max);
    if n.is_none() {
        ctx.refuse(format!(
            "{key} = \"{value}\" must be a sign, a number up to {max} and {unit}, like \
             {key} = \"{example}\""
        ));
        return None;
    }
    Some(value.to_owned())
}

fn max_chars(ctx: &mut Ctx<'_>, value: Option<u32>) -> Option<usize> {
    match value.map(|v| v as usize) {
        None => Some(DEFAULT_TTS_MAX_CHARS),
        Some(n @ 1..=MAX_TTS_MAX_CHARS) => Some(n),
        Some(_) => {
            ctx.refuse(format!(
                "tts.max_chars must be between 1 and {MAX_TTS_MAX_CHARS} characters (default \
                 {DEFAULT_TTS_MAX_CHARS})"
            ));
            None
        }
    }
}
