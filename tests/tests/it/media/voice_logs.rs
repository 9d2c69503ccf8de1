//! Speech failures are logged at WARN and no log line carries the speech key or header value.

use tests::chat::completed;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, LogCapture, Script};
use tests::fake_speech::{Behaviour, FakeSpeech};
use tests::harness::Harness;
use tests::media::{SPEECH_HEADER, SPEECH_KEY, request, speech_toml, turn_with, voice};

#[tokio::test]
async fn speech_failures_are_warned_without_secrets() {
    let (logs, _guard) = LogCapture::install();
    let fake = FakeLlm::start().await;
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    let cfg = TestConfig::new(&fake.url(), &speech_toml(&speech.base(), SPEECH_KEY, true));
    let mut h = Harness::start(cfg).await;

    speech.set_tts(Behaviour::Fail(500));
    fake.push(Script::text("文字回答。"));
    let events = turn_with(&mut h.client, request("", vec![voice(b"OggS..")], true)).await;
    assert_eq!(completed(&events).voice_reply, None);

    // A key the server does not take: its 401 quotes the key back.
    speech.set_tts(Behaviour::Answer);
    h.stop().await;
    let other = FakeSpeech::start("sk-some-other-key-000000000000").await;
    let cfg = TestConfig::new(&fake.url(), &speech_toml(&other.base(), SPEECH_KEY, true));
    let mut h = Harness::start(cfg).await;
    let events = turn_with(&mut h.client, request("", vec![voice(b"OggS..")], true)).await;
    assert!(matches!(
        events.last(),
        Some(kernel_proto::v1::chat_event::Event::Failed(_))
    ));
    h.stop().await;

    let lines = logs.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("text-to-speech failed") && l.contains("500")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("turn failed") && l.contains("语音识别失败")),
        "{lines:#?}"
    );
    for line in &lines {
        assert!(!line.contains(SPEECH_KEY), "{line}");
        assert!(!line.contains(SPEECH_HEADER), "{line}");
    }
}
