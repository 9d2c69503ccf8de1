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
fn edge_tts_needs_no_key_and_reads_voice_rate_and_pitch() {
    let config = load_text(&with("[tts]\ntype = \"edge\"\n"), Component::Agentd).unwrap();
    let tts = config.tts.unwrap();
    assert_eq!(tts.kind, TtsKind::Edge);
    assert!(tts.api_key.is_none());
    assert_eq!(
        tts.api_base,
        "wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1"
    );
    assert_eq!(
        (tts.voice.as_str(), tts.rate.as_str(), tts.pitch.as_str()),
        ("zh-CN-XiaoxiaoNeural", "+0%", "+0Hz")
    );
    let text = with(
        "[tts]\ntype = \"edge\"\nvoice = \"zh-CN-YunxiNeural\"\nrate = \"-10%\"\npitch = \"+5Hz\"\napi_base = \"ws://127.0.0.1:9/edge\"\n",
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let summary = config.summary();
    assert!(
        summary.contains("tts: edge at ws://127.0.0.1:9/edge"),
        "{summary}"
    );
    let tts = config.tts.unwrap();
    assert_eq!(
        (tts.voice.as_str(), tts.rate.as_str(), tts.pitch.as_str()),
        ("zh-CN-YunxiNeural", "-10%", "+5Hz")
    );
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
    for (bad, words) in [
        ("rate = \"fast\"", &["tts.rate", "+10%"][..]),
        ("rate = \"+300%\"", &["tts.rate"]),
        ("pitch = \"5Hz\"", &["tts.pitch", "-5Hz"]),
        (
            "voice = \"Xiaoxiao\"",
            &["tts.voice", "zh-CN-XiaoxiaoNeural"],
        ),
        ("api_base = \"https://x\"", &["tts.api_base", "wss://"]),
        ("api_key = \"sk-x\"", &["tts.api_key", "edge"]),
    ] {
        assert_one_problem(
            load_text(
                &with(&format!("[tts]\ntype = \"edge\"\n{bad}\n")),
                Component::Agentd,
            ),
            words,
        );
    }
    assert_one_problem(
        load_text(&with("[tts]\nrate = \"+5%\"\n"), Component::Agentd),
        &["tts.rate", "edge"],
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
