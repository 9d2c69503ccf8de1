//! Media through both real binaries: photos, documents, voice notes and audio files are
//! downloaded from the fake Bot API and reach the model; refusals reach the owner without a model
//! call; a voice note with `[tts]` gets a voice note back, an audio file a text answer only.
//! While a voice note is transcribed, the placeholder says so.

use kernel_common::config::Locale;
use tests::fake_llm::Script;
use tests::fake_speech::{Behaviour, FAKE_OGG, FakeSpeech};
use tests::fake_telegram::{DOWNLOAD, OWNER_ID};
use tests::media::{PNG, SPEECH_KEY, base64, speech_toml};
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_reaches_the_model_as_a_base64_image_with_its_caption() {
    for kind in ["claude", "openai_compat"] {
        let stack = Stack::start_with(kind, "").await;
        stack.llm.push(Script::text("a tiny PNG"));
        stack
            .telegram
            .user_photo(OWNER_ID, PNG.to_vec(), Some("图里是什么？"));
        assert_eq!(stack.only_answer().await, "a tiny PNG");
        let request = stack.llm.last_request().unwrap();
        assert!(request.raw_body.contains(&base64(PNG)), "{kind}: no image");
        assert!(
            request.raw_body.contains("图里是什么？"),
            "{kind}: no caption"
        );
        assert_eq!(stack.telegram.calls_of(DOWNLOAD).len(), 1);
        stack.assert_no_secrets();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_file_arrives_as_a_fenced_block_and_a_pdf_is_refused() {
    let stack = Stack::start().await;
    stack.llm.push(Script::text("looks fine"));
    let code = "def add(a, b):\n    return a + b\n";
    stack.telegram.user_document(
        OWNER_ID,
        "calc.py",
        code.as_bytes().to_vec(),
        Some("review"),
    );
    assert_eq!(stack.only_answer().await, "looks fine");
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("[文件: calc.py]"), "{body}");
    assert!(body.contains("return a + b"), "{body}");

    let asked =
        stack
            .telegram
            .user_document(OWNER_ID, "report.pdf", b"%PDF-1.7 fake".to_vec(), None);
    let refusal = stack
        .telegram
        .wait_for_call(
            "editMessageText",
            |c| text_of(c).contains("暂不支持该格式"),
            PROMPT,
        )
        .await;
    assert!(text_of(&refusal).starts_with("⚠️"), "{}", text_of(&refusal));
    assert_eq!(stack.llm.requests().len(), 1, "no model call for the PDF");
    let placeholder = stack.reply_to(asked).await;
    assert_eq!(
        refusal.int_param("message_id"),
        placeholder.sent_message_id()
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_over_20_mb_is_refused_before_any_download() {
    let stack = Stack::start().await;
    let asked = stack
        .telegram
        .user_document_claiming_size(OWNER_ID, "huge.log", 25 * 1024 * 1024);
    let reply = stack.reply_to(asked).await;
    assert_eq!(text_of(&reply), zh().file_too_large(20));
    assert!(stack.telegram.calls_of("getFile").is_empty());
    assert!(stack.telegram.calls_of(DOWNLOAD).is_empty());
    assert!(stack.llm.requests().is_empty());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_is_transcribed_and_answered_with_a_voice_note_and_text() {
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    speech.set_transcript("明天早上九点提醒我开会");
    // The transcript waits until the placeholder has said what is happening (edits are
    // throttled to one per 1.5 s, so a fast transcription would never be shown).
    speech.set_stt(Behaviour::Hold);
    let stack = Stack::start_with("claude", &speech_toml(&speech.base(), SPEECH_KEY, true)).await;
    stack.llm.push(Script::text("好的，明天九点提醒你。"));
    let asked = stack
        .telegram
        .user_voice(OWNER_ID, b"OggS-owner-voice".to_vec());
    let transcribing = stack
        .telegram
        .wait_for_call(
            "editMessageText",
            |c| c.ok && text_of(c) == zh().transcribing(),
            PROMPT,
        )
        .await;
    let placeholder = stack.reply_to(asked).await;
    assert_eq!(
        transcribing.int_param("message_id"),
        placeholder.sent_message_id()
    );
    assert!(
        stack.llm.requests().is_empty(),
        "the model waits for the text"
    );
    speech.release();
    stack
        .telegram
        .wait_for_call("sendVoice", |c| c.ok, PROMPT)
        .await;
    let visible = stack.turn_done().await;
    assert_eq!(
        visible.len(),
        2,
        "the text and the voice note: {visible:#?}"
    );
    assert_eq!(visible[0].text, "好的，明天九点提醒你。");
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("[语音: 明天早上九点提醒我开会]"), "{body}");
    let voice = stack
        .telegram
        .messages(OWNER_ID)
        .into_iter()
        .find(|m| m.voice.is_some())
        .unwrap();
    assert_eq!(voice.voice.as_deref(), Some(FAKE_OGG));
    assert_eq!(voice.reply_to, Some(asked));
    assert!(!stack.logs().contains(SPEECH_KEY));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audio_file_is_transcribed_and_answered_in_text_only() {
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    speech.set_transcript("周五之前把预算表发给老板");
    let stack = Stack::start_with("claude", &speech_toml(&speech.base(), SPEECH_KEY, true)).await;
    stack.llm.push(Script::text("记下了：周五前发预算表。"));
    let m4a = b"\x00\x00\x00\x20ftypM4A fake-aac-frames".to_vec();
    stack.telegram.user_audio(
        OWNER_ID,
        "录音.m4a",
        "audio/x-m4a",
        m4a.clone(),
        Some("帮我记一下"),
    );
    assert_eq!(stack.only_answer().await, "记下了：周五前发预算表。");

    let stt = speech.requests_to("/v1/audio/transcriptions");
    assert_eq!(stt.len(), 1);
    let (file_name, content_type, data) = stt[0].file.clone().unwrap();
    assert_eq!(
        (file_name.as_str(), content_type.as_str()),
        ("voice.m4a", "audio/mp4")
    );
    assert_eq!(data, m4a);
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("[语音: 周五之前把预算表发给老板]"), "{body}");
    assert!(body.contains("帮我记一下"), "{body}");
    assert!(
        speech.requests_to("/v1/audio/speech").is_empty(),
        "no voice reply to an audio file"
    );
    assert!(stack.telegram.calls_of("sendVoice").is_empty());
    assert!(!stack.logs().contains(SPEECH_KEY));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_without_stt_gets_the_not_configured_hint() {
    let stack = Stack::start().await;
    stack
        .telegram
        .user_voice(OWNER_ID, b"OggS-owner-voice".to_vec());
    let hint = stack
        .telegram
        .wait_for_call("editMessageText", |c| text_of(c).contains("[stt]"), PROMPT)
        .await;
    assert!(text_of(&hint).starts_with("⚠️"), "{}", text_of(&hint));
    assert!(stack.llm.requests().is_empty());
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sticker_is_not_forwarded_and_the_owner_is_told() {
    let stack = Stack::start().await;
    stack.telegram.push_raw_update(serde_json::json!({
        "update_id": 500_000,
        "message": {
            "message_id": 77, "date": 1_700_000_000,
            "chat": { "id": OWNER_ID, "type": "private", "first_name": "o" },
            "from": { "id": OWNER_ID, "is_bot": false, "first_name": "o" },
            "sticker": {
                "file_id": "s1", "file_unique_id": "us1", "width": 1, "height": 1,
                "is_animated": false, "is_video": false, "type": "regular"
            }
        }
    }));
    let reply = stack.reply_to(77).await;
    assert_eq!(
        text_of(&reply),
        zh().unsupported_kind(tests::told::Unsupported::Sticker)
    );
    assert!(stack.llm.requests().is_empty());
}

/// A `w`×`h` PNG of noise: incompressible, so about 3 bytes a pixel.
fn noise_png(w: u32, h: u32) -> Vec<u8> {
    let mut seed = 0x9e37_79b9_u32;
    let img = image::RgbImage::from_fn(w, h, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let b = seed.to_le_bytes();
        image::Rgb([b[0], b[1], b[2]])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mb_png_sent_as_a_file_reaches_claude_scaled_within_its_limit() {
    use base64::Engine as _;
    const CLAUDE_MAX: usize = 3_932_160;
    let big = noise_png(1600, 1100);
    assert!(big.len() > 5_000_000, "{}", big.len());
    let llm = tests::fake_llm::FakeLlm::start_with_body_limit(64 * 1024 * 1024).await;
    let stack = Stack::start_on(llm, "claude", "", |toml| toml).await;
    stack.llm.push(Script::text("noise, scaled"));
    stack
        .telegram
        .user_document(OWNER_ID, "scan.png", big, Some("看看"));
    assert_eq!(stack.only_answer().await, "noise, scaled");
    let body = stack.llm.last_request().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let parts = messages.last().unwrap()["content"].as_array().unwrap();
    let images: Vec<_> = parts.iter().filter(|p| p["type"] == "image").collect();
    assert_eq!(images.len(), 1, "{parts:?}");
    let source = &images[0]["source"];
    assert_eq!(source["media_type"], "image/jpeg", "a photo becomes a JPEG");
    let data = base64::engine::general_purpose::STANDARD
        .decode(source["data"].as_str().unwrap())
        .unwrap();
    assert!(data.len() <= CLAUDE_MAX, "{}", data.len());
    let scaled = image::load_from_memory(&data).unwrap();
    let ratio = f64::from(scaled.width()) / f64::from(scaled.height());
    assert!(
        (ratio - 1600.0 / 1100.0).abs() < 0.01,
        "aspect kept: {ratio}"
    );
    stack.assert_no_secrets();
}

/// Issue 49: `[tts] type = "edge"` with the service down — the voice note is still answered in
/// text, and the owner reads why no voice note came (one line, no secret).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_edge_voice_service_down_the_text_answer_says_why() {
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    speech.set_transcript("今天天气怎么样");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let extra = format!(
        "{}\n[tts]\ntype = \"edge\"\napi_base = \"ws://127.0.0.1:{port}/edge/v1\"\n\
         voice = \"zh-CN-XiaoxiaoNeural\"\ntimeout_secs = 10\n",
        speech_toml(&speech.base(), SPEECH_KEY, false)
    );
    let stack = Stack::start_with("claude", &extra).await;
    stack.llm.push(Script::text("晴，二十度。"));
    let asked = stack
        .telegram
        .user_voice(OWNER_ID, b"OggS-owner-voice".to_vec());
    let visible = stack.turn_done().await;
    assert_eq!(visible.len(), 1, "the text answer only: {visible:#?}");
    let answer = &visible[0];
    assert!(answer.voice.is_none());
    assert_eq!(answer.reply_to, Some(asked));
    let (said, why) = answer
        .text
        .split_once("\n\n")
        .expect("a line under the answer");
    assert_eq!(said, "晴，二十度。");
    assert!(
        why.starts_with("（没有语音回复：无法连接语音合成服务：")
            && why.ends_with("以上为文字回答。）")
            && !why.contains('\n'),
        "{why}"
    );
    assert!(stack.telegram.calls_of("sendVoice").is_empty());
    stack.assert_no_secrets();
}
