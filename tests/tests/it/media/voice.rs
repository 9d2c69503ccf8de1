//! Voice through the gRPC service and the fake speech server: a voice note is transcribed and
//! the model sees `[语音: …]` (stored as `[语音已处理]`); with `[tts]` and `want_voice_reply` the
//! `Completed` event carries Ogg audio of the spoken answer; a TTS failure still completes with
//! text; without `[stt]` voice is refused as not set up; an STT failure or `/cancel` during a
//! stalled transcription ends the turn with no model call and nothing stored. Speech work is
//! reported as it starts: `speech` TRANSCRIBING right after `started`, SYNTHESIZING just before
//! `completed`.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, next, rest, session_id, speech_stages, stored, turn, wire_messages};
use tests::config::{PROVIDER_KEY, TestConfig};
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_speech::{Behaviour, FAKE_OGG, FakeSpeech};
use tests::harness::Harness;
use tests::media::{
    SPEECH_HEADER, SPEECH_KEY, image, request, set_locale, speech_toml, turn_with, voice,
};
use tonic::Code;

const TRANSCRIPTIONS: &str = "/v1/audio/transcriptions";
const SPEECH: &str = "/v1/audio/speech";
/// A voice note's bytes (the fake only needs them non-empty).
const NOTE: &[u8] = b"OggS\x00\x02voice-note-bytes";

struct Setup {
    fake: FakeLlm,
    speech: FakeSpeech,
    h: Harness,
}

/// A harness whose `[stt]` (and `[tts]` when `tts`) point at a fake speech server expecting
/// `server_key`, while the config sends `config_key`.
async fn setup(tts: bool, config_key: &str, server_key: &str) -> Setup {
    let fake = FakeLlm::start().await;
    let speech = FakeSpeech::start(server_key).await;
    let cfg = TestConfig::new(&fake.url(), &speech_toml(&speech.base(), config_key, tts));
    let h = Harness::start(cfg).await;
    Setup { fake, speech, h }
}

impl Setup {
    /// Sends the voice note [`NOTE`] (asking for a spoken reply when `want_voice`); its events.
    async fn voice_note(&mut self, want_voice: bool) -> tonic::Streaming<pb::ChatEvent> {
        self.h
            .client
            .chat(request("", vec![voice(NOTE)], want_voice))
            .await
            .expect("accepted")
            .into_inner()
    }
}

/// The text of the newest user message of the model request `i`.
fn model_saw(fake: &FakeLlm, i: usize) -> String {
    let body = fake.requests()[i].body.clone();
    wire_messages(&body).pop().expect("a user message")["content"].to_string()
}

/// The turn is over and changed nothing: no model call, and the next turn's session holds only
/// its own round.
async fn nothing_happened(s: &mut Setup) {
    assert!(s.fake.requests().is_empty(), "no model call");
    let events = turn(&mut s.h.client, "你好").await;
    let transcript = stored(&s.h.cfg, session_id(&events)).await;
    assert_eq!(transcript.len(), 2, "nothing else stored: {transcript:?}");
}

#[tokio::test]
async fn a_voice_note_is_transcribed_and_the_model_sees_it() {
    let mut s = setup(false, SPEECH_KEY, SPEECH_KEY).await;
    s.speech.set_transcript("明天早上九点\n提醒我开会");
    s.fake.push(Script::text("好的，已记下。"));
    let events = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], true)).await;
    let done = completed(&events);
    assert_eq!(done.text, "好的，已记下。");
    assert_eq!(done.voice_reply, None, "no [tts]: text only");

    let stt = s.speech.requests_to(TRANSCRIPTIONS);
    assert_eq!(stt.len(), 1);
    let (file_name, content_type, data) = stt[0].file.clone().unwrap();
    assert_eq!(
        (file_name.as_str(), content_type.as_str()),
        ("voice.ogg", "audio/ogg")
    );
    assert_eq!(data, NOTE);
    assert_eq!(stt[0].field("model"), Some("whisper-test"));
    assert_eq!(stt[0].header("x-speech-org"), Some(SPEECH_HEADER));
    assert!(model_saw(&s.fake, 0).contains("[语音: 明天早上九点 提醒我开会]"));

    let transcript = stored(&s.h.cfg, session_id(&events)).await;
    assert_eq!(transcript[0].text(), "[语音已处理]");
    assert_eq!(
        tests::media::downloads(&s.h.cfg)
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "ogg"))
            .count(),
        1
    );
    s.h.stop().await;
}

#[tokio::test]
async fn a_voice_turn_reports_transcribing_then_synthesizing() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    s.speech.set_stt(Behaviour::Hold);
    s.fake.push(Script::text("好的，已记下。"));
    let mut stream = s.voice_note(true).await;
    assert!(matches!(next(&mut stream).await, Some(Event::Started(_))));
    let transcribing = next(&mut stream).await;
    assert!(
        matches!(&transcribing, Some(Event::Speech(e)) if e.stage() == pb::SpeechStage::Transcribing),
        "{transcribing:?}"
    );
    tokio::time::timeout(Duration::from_secs(20), s.speech.holding())
        .await
        .expect("the transcription reached the fake");
    assert!(s.fake.requests().is_empty(), "the model waits for the text");
    s.speech.release();

    let events = rest(&mut stream).await;
    assert_eq!(completed(&events).voice_reply.as_deref(), Some(FAKE_OGG));
    assert_eq!(speech_stages(&events), [pb::SpeechStage::Synthesizing]);
    let first_text = events.iter().position(|e| matches!(e, Event::TextDelta(_)));
    let synthesizing = events.iter().position(|e| matches!(e, Event::Speech(_)));
    assert!(first_text < synthesizing, "{events:?}");
    assert_eq!(
        synthesizing,
        Some(events.len() - 2),
        "right before completed"
    );
    s.h.stop().await;
}

#[tokio::test]
async fn only_speech_work_that_happens_is_reported() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    s.fake.push(Script::text("文字回答。"));
    let text = turn(&mut s.h.client, "只要文字").await;
    completed(&text);
    assert_eq!(speech_stages(&text), [], "a text turn: {text:?}");

    s.fake.push(Script::text("说出来。"));
    let spoken = turn_with(&mut s.h.client, request("读给我听", vec![], true)).await;
    assert_eq!(speech_stages(&spoken), [pb::SpeechStage::Synthesizing]);

    // Nothing reads aloud in code: no synthesis, so none is announced.
    s.fake.push(Script::text("```\nls\n```"));
    let code = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], true)).await;
    assert_eq!(completed(&code).voice_reply, None);
    assert_eq!(speech_stages(&code), [pb::SpeechStage::Transcribing]);
    s.h.stop().await;
}

#[tokio::test]
async fn with_tts_the_completed_event_carries_ogg_of_the_spoken_answer() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    let answer = "## 好的\n\n明天**九点**开会。\n\n```sh\nrm -rf build\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    s.fake.push(Script::text(answer));
    let events = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], true)).await;
    let done = completed(&events);
    assert_eq!(done.text, answer, "the text is the whole answer");
    assert_eq!(done.voice_reply.as_deref(), Some(FAKE_OGG));
    let tts = s.speech.requests_to(SPEECH);
    assert_eq!(tts.len(), 1);
    assert_eq!(
        tts[0].json["input"], "好的\n明天九点开会。",
        "no code, no table"
    );
    assert_eq!(tts[0].json["model"], "tts-test");
    assert_eq!(tts[0].json["voice"], "nova");
    assert_eq!(tts[0].json["response_format"], "opus");
    assert_eq!(
        tts[0].header("authorization"),
        Some(format!("Bearer {SPEECH_KEY}").as_str())
    );

    // Not wanted: no synthesis. Wanted for a text message: spoken too.
    s.fake.push(Script::text("文字回答。"));
    let done = turn(&mut s.h.client, "只要文字").await;
    assert_eq!(completed(&done).voice_reply, None);
    assert_eq!(s.speech.requests_to(SPEECH).len(), 1);
    s.fake.push(Script::text("说出来。"));
    let spoken = turn_with(&mut s.h.client, request("读给我听", vec![], true)).await;
    assert_eq!(completed(&spoken).voice_reply.as_deref(), Some(FAKE_OGG));

    // An answer that is only code has nothing to say: text only, no request.
    s.fake.push(Script::text("```\nls\n```"));
    let code = turn_with(&mut s.h.client, request("命令？", vec![], true)).await;
    assert_eq!(completed(&code).voice_reply, None);
    assert_eq!(s.speech.requests_to(SPEECH).len(), 2);
    s.h.stop().await;
}

#[tokio::test]
async fn long_answers_are_spoken_up_to_max_chars() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    s.fake.push(Script::text("这是很长的一句话。".repeat(100)));
    let events = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], true)).await;
    assert!(completed(&events).voice_reply.is_some());
    let input = s.speech.requests_to(SPEECH)[0].json["input"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(input.chars().count() <= 200, "max_chars = 200: {input}");
    assert!(input.ends_with("其余内容请看文字消息。"), "{input}");
    s.h.stop().await;
}

#[tokio::test]
async fn a_tts_failure_still_completes_with_the_text() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    for behaviour in [Behaviour::Fail(500), Behaviour::Garbage] {
        s.speech.set_tts(behaviour.clone());
        s.fake.push(Script::text("文字仍然送达。"));
        let events = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], true)).await;
        let done = completed(&events);
        assert_eq!(done.text, "文字仍然送达。", "{behaviour:?}");
        assert_eq!(done.voice_reply, None, "{behaviour:?}");
    }
    s.h.stop().await;
}

#[tokio::test]
async fn without_stt_a_voice_note_is_refused_as_not_set_up() {
    for (locale, message) in [
        ("zh", "语音消息未启用：请在 config.toml 中配置 [stt]"),
        ("en", "Voice messages are not set up: configure [stt]"),
    ] {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::new(&fake.url(), "");
        set_locale(&cfg, locale);
        let mut h = Harness::start(cfg).await;
        let err = h
            .client
            .chat(request("", vec![voice(NOTE)], true))
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert!(err.message().starts_with(message), "{}", err.message());
        assert!(fake.requests().is_empty(), "no model call");
        h.stop().await;
    }
}

#[tokio::test]
async fn an_stt_failure_fails_the_turn_redacted_with_no_model_call() {
    let wrong_key = "sk-wrong-speech-key-9876543210";
    let mut s = setup(false, wrong_key, SPEECH_KEY).await;
    let events = turn_with(&mut s.h.client, request("", vec![voice(NOTE)], false)).await;
    let Some(Event::Failed(failed)) = events.last() else {
        panic!("the turn did not fail: {events:?}");
    };
    assert_eq!(
        failed.message,
        "语音识别失败：接口返回 401：Incorrect API key provided: sk-w…3210."
    );
    for secret in [wrong_key, SPEECH_KEY, SPEECH_HEADER, PROVIDER_KEY] {
        assert!(!failed.message.contains(secret), "{}", failed.message);
        assert!(!failed.message.contains(&secret[4..secret.len() - 4]));
    }
    nothing_happened(&mut s).await;

    let status =
        s.h.client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
    assert!(
        status
            .last_error
            .unwrap_or_default()
            .starts_with("语音识别失败")
    );
    s.h.stop().await;
}

#[tokio::test]
async fn an_empty_transcript_fails_the_turn() {
    let mut s = setup(false, SPEECH_KEY, SPEECH_KEY).await;
    s.speech.set_transcript("  ");
    let events = turn_with(
        &mut s.h.client,
        request(
            "",
            vec![voice(NOTE), image("image/png", b"\x89PNG\r\n\x1a\n")],
            false,
        ),
    )
    .await;
    assert!(
        matches!(events.last(), Some(Event::Failed(f)) if f.message == "语音识别失败：没有识别出任何文字。"),
        "{events:?}"
    );
    nothing_happened(&mut s).await;
    s.h.stop().await;
}

#[tokio::test]
async fn cancel_during_a_stalled_transcription_ends_the_turn() {
    let mut s = setup(false, SPEECH_KEY, SPEECH_KEY).await;
    s.speech.set_stt(Behaviour::Stall);
    let mut stream = s.voice_note(false).await;
    assert!(matches!(next(&mut stream).await, Some(Event::Started(_))));
    tokio::time::timeout(Duration::from_secs(20), s.speech.stalling())
        .await
        .expect("the transcription reached the fake");
    let cancelled =
        s.h.client
            .cancel(pb::CancelRequest::default())
            .await
            .unwrap()
            .into_inner();
    assert!(cancelled.cancelled);
    let events = rest(&mut stream).await;
    assert!(
        matches!(events.last(), Some(Event::Cancelled(_))),
        "{events:?}"
    );
    s.speech.set_stt(Behaviour::Answer);
    nothing_happened(&mut s).await;
    s.h.stop().await;
}

#[tokio::test]
async fn cancel_during_a_stalled_synthesis_still_delivers_the_text() {
    let mut s = setup(true, SPEECH_KEY, SPEECH_KEY).await;
    s.speech.set_tts(Behaviour::Stall);
    s.fake.push(Script::text("答案在这里。"));
    let mut stream = s.voice_note(true).await;
    tokio::time::timeout(Duration::from_secs(20), s.speech.stalling())
        .await
        .expect("the synthesis reached the fake");
    let cancelled =
        s.h.client
            .cancel(pb::CancelRequest::default())
            .await
            .unwrap()
            .into_inner();
    assert!(cancelled.cancelled, "the turn was still running");
    let events = rest(&mut stream).await;
    let done = completed(&events);
    assert_eq!(done.text, "答案在这里。");
    assert_eq!(done.voice_reply, None);
    let transcript = stored(&s.h.cfg, session_id(&events)).await;
    assert_eq!(transcript.len(), 2, "the answer is stored: {transcript:?}");
    s.h.stop().await;
}
