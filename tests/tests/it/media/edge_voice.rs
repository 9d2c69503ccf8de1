//! `[tts] type = "edge"` against a local fake of Microsoft Edge's read-aloud WebSocket: `--check`
//! passes without a key; a voice note asking for a spoken reply gets the fake's Ogg/Opus (asked
//! for as `ogg-24khz-16bit-mono-opus`, in the configured voice, rate and pitch); with the fake
//! down the text answer still arrives and the reason is logged.

use std::process::Command;

use tests::chat::completed;
use tests::config::TestConfig;
use tests::fake_edge_tts::{FAKE_EDGE_OGG, FakeEdgeTts};
use tests::fake_llm::{FakeLlm, LogCapture, Script};
use tests::fake_speech::FakeSpeech;
use tests::harness::Harness;
use tests::media::{SPEECH_KEY, request, speech_toml, turn_with, voice};
use tests::process::bin_path;

fn edge_toml(url: &str) -> String {
    format!(
        "[tts]\ntype = \"edge\"\napi_base = \"{url}\"\nvoice = \"zh-CN-XiaoxiaoNeural\"\n\
         rate = \"+10%\"\npitch = \"-5Hz\"\ntimeout_secs = 10\n"
    )
}

#[tokio::test]
async fn edge_voices_answer_a_voice_note_with_ogg_opus_and_fall_back_to_text() {
    let (logs, _guard) = LogCapture::install();
    let fake = FakeLlm::start().await;
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    let edge = FakeEdgeTts::start().await;
    let extra = format!(
        "{}\n{}",
        speech_toml(&speech.base(), SPEECH_KEY, false),
        edge_toml(&edge.url())
    );
    let cfg = TestConfig::new(&fake.url(), &extra);

    // No key anywhere in [tts], and --check says what it will use.
    let out = Command::new(bin_path("kernel-agentd"))
        .arg("--check")
        .arg("--config")
        .arg(&cfg.path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("tts: edge at ws://127.0.0.1:")
            && said.contains("voice zh-CN-XiaoxiaoNeural; rate +10%; pitch -5Hz"),
        "{said}"
    );

    let mut h = Harness::start(cfg).await;
    fake.push(Script::text("明天九点开会。"));
    let events = turn_with(&mut h.client, request("", vec![voice(b"OggS..")], true)).await;
    let done = completed(&events);
    assert_eq!(done.text, "明天九点开会。");
    assert_eq!(done.voice_reply.as_deref(), Some(FAKE_EDGE_OGG));
    let seen = edge.exchanges();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].query.contains("TrustedClientToken=") && seen[0].query.contains("Sec-MS-GEC="),
        "{}",
        seen[0].query
    );
    assert!(
        seen[0]
            .config
            .contains("\"outputFormat\":\"ogg-24khz-16bit-mono-opus\""),
        "{}",
        seen[0].config
    );
    let ssml = &seen[0].ssml;
    assert!(
        ssml.contains("<voice name='zh-CN-XiaoxiaoNeural'>")
            && ssml.contains("pitch='-5Hz' rate='+10%'")
            && ssml.contains("明天九点开会。"),
        "{ssml}"
    );

    // The service down: the text answer still arrives, and the log says why.
    drop(edge);
    fake.push(Script::text("文字仍然送达。"));
    let events = turn_with(&mut h.client, request("", vec![voice(b"OggS..")], true)).await;
    let done = completed(&events);
    assert_eq!(done.text, "文字仍然送达。");
    assert_eq!(done.voice_reply, None);
    h.stop().await;
    let lines = logs.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("text-to-speech failed") && l.contains("cannot reach")),
        "{lines:#?}"
    );
}
