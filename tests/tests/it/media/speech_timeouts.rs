//! `[stt] timeout_secs` and `[tts] timeout_secs` are the deadlines actually used: against a
//! fake speech server that stalls, a 1-second STT timeout fails the turn with the STT-failed
//! message (no hang, no model call) and a 1-second TTS timeout still completes with the text.

use std::time::{Duration, Instant};

use kernel_proto::v1::chat_event::Event;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_speech::{Behaviour, FakeSpeech};
use tests::harness::Harness;
use tests::media::{SPEECH_KEY, request, speech_toml, turn_with, voice};

/// A voice note's bytes (the fake only needs them non-empty).
const NOTE: &[u8] = b"OggS\x00\x02voice-note-bytes";
/// Far below the defaults (120 s / 90 s) and far above the configured 1 s.
const BOUND: Duration = Duration::from_secs(20);

/// A harness with `[stt]` and `[tts]` on a stalling fake speech server and `timeout_secs = 1` in
/// the `section` (`"stt"` or `"tts"`).
async fn setup(section: &str) -> (FakeLlm, FakeSpeech, Harness) {
    let fake = FakeLlm::start().await;
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    speech.set_stt(Behaviour::Stall);
    speech.set_tts(Behaviour::Stall);
    let toml = speech_toml(&speech.base(), SPEECH_KEY, true).replacen(
        &format!("[{section}]\n"),
        &format!("[{section}]\ntimeout_secs = 1\n"),
        1,
    );
    assert!(toml.contains("timeout_secs = 1"), "{toml}");
    let h = Harness::start(TestConfig::new(&fake.url(), &toml)).await;
    (fake, speech, h)
}

#[tokio::test]
async fn a_stalled_transcription_fails_the_turn_after_the_configured_timeout() {
    let (fake, speech, mut h) = setup("stt").await;
    let began = Instant::now();
    let events = tokio::time::timeout(
        BOUND,
        turn_with(&mut h.client, request("", vec![voice(NOTE)], false)),
    )
    .await
    .expect("the turn ends on the 1 s timeout, not the 120 s default");
    assert!(began.elapsed() >= Duration::from_secs(1));
    let Some(Event::Failed(failed)) = events.last() else {
        panic!("the turn did not fail: {events:?}");
    };
    assert_eq!(failed.message, "语音识别失败：1 秒内没有结果");
    assert_eq!(speech.requests_to("/v1/audio/transcriptions").len(), 1);
    assert!(fake.requests().is_empty(), "no model call");
    h.stop().await;
}

#[tokio::test]
async fn a_stalled_synthesis_gives_up_after_the_configured_timeout() {
    let (fake, speech, mut h) = setup("tts").await;
    fake.push(Script::text("答案在这里。"));
    let began = Instant::now();
    let events = tokio::time::timeout(
        BOUND,
        turn_with(&mut h.client, request("读给我听", vec![], true)),
    )
    .await
    .expect("the turn ends on the 1 s timeout, not the 90 s default");
    assert!(began.elapsed() >= Duration::from_secs(1));
    let Some(Event::Completed(done)) = events.last() else {
        panic!("the turn did not complete: {events:?}");
    };
    assert_eq!(done.text, "答案在这里。");
    assert_eq!(done.voice_reply, None, "no audio after the timeout");
    assert_eq!(speech.requests_to("/v1/audio/speech").len(), 1);
    h.stop().await;
}
