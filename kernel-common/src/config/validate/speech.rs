//! `[stt]` and `[tts]`: the speech endpoints for voice notes in and voice replies out.

use super::providers::{OPENAI_BASE, headers};
use super::{Ctx, given};
use crate::config::env::{STT_API_KEY_ENV, TTS_API_KEY_ENV};
use crate::config::raw::{RawStt, RawTts};
use crate::config::{
    Component, DEFAULT_STT_TIMEOUT, DEFAULT_TTS_MAX_CHARS, DEFAULT_TTS_TIMEOUT, MAX_TTS_MAX_CHARS,
    SttConfig, TtsConfig, TtsKind,
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

/// `[tts]`: `type = "openai_compat"` (default; model `tts-1`, voice `alloy`), with the spoken
/// length capped at `max_chars`. `None` when malformed (with a problem).
pub(super) fn tts(ctx: &mut Ctx<'_>, raw: &RawTts) -> Option<TtsConfig> {
    let kind = tts_kind(ctx, raw.kind.as_deref());
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
        Some("edge") => {
            ctx.refuse(
                "tts.type = \"edge\" is not supported: Microsoft Edge's read-aloud service has no \
                 official API (its access token scheme changes without notice); use type = \
                 \"openai_compat\", and for Edge voices point api_base at a local \
                 OpenAI-compatible Edge TTS server",
            );
            None
        }
        Some(other) => {
            ctx.refuse(format!(
                "tts.type = \"{other}\" is unknown: use \"openai_compat\""
            ));
            None
        }
    }
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
