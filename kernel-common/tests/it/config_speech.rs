//! `[stt]` and `[tts]`: defaults, `tts.type`, `tts.max_chars` and their refusals.

use crate::support;

use kernel_common::config::{Component, DEFAULT_TTS_MAX_CHARS, TtsKind};
use support::{VALID, assert_one_problem, load_text};

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn speech_sections_get_openai_defaults() {
    let config = load_text(&with("[stt]\n[tts]\n"), Component::Agentd).unwrap();
    let stt = config.stt.unwrap();
    assert_eq!(stt.api_base, "https://api.openai.com/v1");
    assert_eq!(stt.model, "whisper-1");
    assert!(stt.api_key.is_none() && stt.headers.is_empty());
    let tts = config.tts.unwrap();
    assert_eq!(tts.kind, TtsKind::OpenAiCompat);
    assert_eq!((tts.model.as_str(), tts.voice.as_str()), ("tts-1", "alloy"));
    assert_eq!(tts.max_chars, DEFAULT_TTS_MAX_CHARS);
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn tts_type_and_max_chars_are_read() {
    let text = with(
        "[tts]\ntype = \"openai_compat\"\napi_base = \"http://127.0.0.1:9/v1/\"\nvoice = \"nova\"\nmax_chars = 300\n",
    );
    let tts = load_text(&text, Component::Agentd).unwrap().tts.unwrap();
    assert_eq!(tts.kind, TtsKind::OpenAiCompat);
    assert_eq!(tts.api_base, "http://127.0.0.1:9/v1");
    assert_eq!((tts.voice.as_str(), tts.max_chars), ("nova", 300));
}

#[test]
fn bad_tts_settings_are_refused() {
    assert_one_problem(
        load_text(&with("[tts]\ntype = \"festival\"\n"), Component::Agentd),
        &["tts.type", "festival", "openai_compat"],
    );
    assert_one_problem(
        load_text(&with("[tts]\ntype = \"edge\"\n"), Component::Agentd),
        &["tts.type", "edge", "openai_compat"],
    );
    for n in ["0", "20001"] {
        assert_one_problem(
            load_text(
                &with(&format!("[tts]\nmax_chars = {n}\n")),
                Component::Agentd,
            ),
            &["tts.max_chars", "1500"],
        );
    }
    assert_one_problem(
        load_text(&with("[tts]\napi_base = \"ftp://x\"\n"), Component::Agentd),
        &["tts.api_base"],
    );
}

#[test]
fn a_spoken_length_over_openais_limit_is_a_warning() {
    let config = load_text(&with("[tts]\nmax_chars = 5000\n"), Component::Agentd).unwrap();
    assert_eq!(config.tts.unwrap().max_chars, 5000);
    let warnings = config.warnings.join("\n");
    assert!(
        warnings.contains("tts.max_chars") && warnings.contains("4096"),
        "{warnings}"
    );
}

#[test]
fn the_summary_names_the_tts_type_and_length() {
    let config = load_text(&with("[tts]\nmax_chars = 800\n"), Component::Agentd).unwrap();
    let summary = config.summary();
    assert!(
        summary.contains("tts: openai_compat at https://api.openai.com/v1")
            && summary.contains("max_chars 800"),
        "{summary}"
    );
}
