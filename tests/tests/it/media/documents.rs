//! Documents through the gRPC service: text and code files reach the model as `[文件: name]` + a
//! fenced block (cut at 50,000 characters with a marker), are slimmed to `[文件 name 已处理]`,
//! and are kept under a Kernel-made name; PDF/Office, unknown extensions and non-UTF-8 text are
//! refused in the owner's language with no model call and nothing stored. Audio files `[stt]`
//! takes (`talk.mp3`) are transcribed like voice notes, or refused as voice not set up.

use tests::chat::{completed, session_id, stored, turn, wire_messages};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::fake_speech::FakeSpeech;
use tests::harness::Harness;
use tests::media::{SPEECH_KEY, document, downloads, request, set_locale, speech_toml, turn_with};
use tonic::Code;

/// Every text the newest user message of request `i` carried.
fn user_texts(fake: &FakeLlm, i: usize) -> Vec<String> {
    let body = fake.requests()[i].body.clone();
    let last = wire_messages(&body).pop().expect("a user message");
    match &last["content"] {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
        other => panic!("unexpected content {other}"),
    }
}

async fn start(extra: &str) -> (FakeLlm, Harness) {
    let fake = FakeLlm::start().await;
    let h = Harness::start(TestConfig::new(&fake.url(), extra)).await;
    (fake, h)
}

#[tokio::test]
async fn a_python_file_arrives_fenced_and_is_slimmed_in_history() {
    let (fake, mut h) = start("").await;
    let code = "def f():\n    return \"```\"  # a fence inside\n";
    fake.push(Script::text("它返回三个反引号。"));
    let events = turn_with(
        &mut h.client,
        request(
            "这段代码做什么？",
            vec![document("x.py", code.as_bytes())],
            false,
        ),
    )
    .await;
    completed(&events);
    let texts = user_texts(&fake, 0);
    let expected = format!("[文件: x.py]\n````py\n{code}````");
    assert!(texts.contains(&expected), "{texts:#?}");
    assert_eq!(texts.last().unwrap(), "这段代码做什么？");

    let transcript = stored(&h.cfg, session_id(&events)).await;
    assert_eq!(
        transcript[0].text(),
        "[文件 x.py 已处理]这段代码做什么？",
        "{transcript:?}"
    );
    let files = downloads(&h.cfg);
    assert_eq!(files.len(), 1);
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), code);
    assert!(files[0].extension().is_some_and(|e| e == "py"));
    h.stop().await;
}

#[tokio::test]
async fn hostile_names_never_become_paths_and_bom_and_extensionless_names_are_fine() {
    let (fake, mut h) = start("").await;
    let outside = h.cfg.dir.path().join("escaped.py");
    let name = format!("../../{}", outside.display());
    completed(
        &turn_with(
            &mut h.client,
            request("", vec![document(&name, b"print(1)")], false),
        )
        .await,
    );
    assert!(!outside.exists());
    assert!(
        user_texts(&fake, 0)
            .iter()
            .any(|t| t.starts_with("[文件: escaped.py]\n```py\n")),
        "only the base name is shown"
    );
    completed(
        &turn_with(
            &mut h.client,
            request(
                "",
                vec![document("Makefile", b"\xEF\xBB\xBFall:\n\techo hi\n")],
                false,
            ),
        )
        .await,
    );
    assert!(
        user_texts(&fake, 1)
            .contains(&"[文件: Makefile]\n```makefile\nall:\n\techo hi\n```".into()),
        "{:#?}",
        user_texts(&fake, 1)
    );
    for file in downloads(&h.cfg) {
        assert_eq!(file.parent().unwrap(), h.cfg.data_dir().join("downloads"));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.contains("escaped") && !name.contains("Makefile"),
            "{name}"
        );
    }
    assert_eq!(downloads(&h.cfg).len(), 2);
    h.stop().await;
}

#[tokio::test]
async fn a_60000_character_text_is_cut_at_50000_with_a_marker() {
    let (fake, mut h) = start("").await;
    let text: String = "汉字abc\n".repeat(10_000); // 6 characters × 10,000
    assert_eq!(text.chars().count(), 60_000);
    completed(
        &turn_with(
            &mut h.client,
            request(
                "总结一下",
                vec![document("notes.txt", text.as_bytes())],
                false,
            ),
        )
        .await,
    );
    let texts = user_texts(&fake, 0);
    let block = texts
        .iter()
        .find(|t| t.starts_with("[文件: notes.txt]"))
        .expect("the document block");
    let kept: String = text.chars().take(50_000).collect();
    assert!(block.contains(&kept));
    let after_kept = &block[block.find(&kept).unwrap() + kept.len()..];
    // The cut falls inside a line: the fence closes on its own line, the marker follows.
    assert_eq!(
        after_kept,
        "\n```\n[文件过长，已截断：只显示前 50000 个字符，共 60000 个字符]"
    );
    h.stop().await;
}

/// `(file name, bytes, message)` for each refusal, in Chinese.
const REFUSALS: [(&str, &[u8], &str); 4] = [
    (
        "report.pdf",
        b"%PDF-1.7",
        "暂不支持该格式（.pdf）：还不能读取 PDF 和 Office 文档。请发送纯文本或代码文件，或直接粘贴文字。",
    ),
    (
        "plan.docx",
        b"PK\x03\x04",
        "暂不支持该格式（.docx）：还不能读取 PDF 和 Office 文档。请发送纯文本或代码文件，或直接粘贴文字。",
    ),
    (
        "data.xyz",
        b"???",
        "暂不支持 .xyz 文件：只能读取 UTF-8 编码的文本和代码文件（如 txt、md、py、json）。",
    ),
    (
        "gbk.txt",
        b"\xc4\xe3\xba\xc3",
        "文件 gbk.txt 不是 UTF-8 编码的文本，无法读取：请转成 UTF-8 后再发送。",
    ),
];

#[tokio::test]
async fn pdf_office_unknown_and_non_utf8_files_are_refused_with_no_model_call() {
    let (fake, mut h) = start("").await;
    for (name, data, message) in REFUSALS {
        let err = h
            .client
            .chat(request("看看", vec![document(name, data)], false))
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Code::InvalidArgument, "{name}");
        assert_eq!(err.message(), message, "{name}");
    }
    assert!(fake.requests().is_empty(), "no model call");
    assert!(downloads(&h.cfg).is_empty(), "nothing kept");

    let events = turn(&mut h.client, "你好").await;
    let transcript = stored(&h.cfg, session_id(&events)).await;
    assert_eq!(
        transcript.len(),
        2,
        "nothing else was stored: {transcript:?}"
    );
    h.stop().await;
}

#[tokio::test]
async fn refusals_follow_the_english_locale() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), "");
    set_locale(&cfg, "en");
    let mut h = Harness::start(cfg).await;
    let cases = [
        (
            "report.pdf",
            &b"%PDF"[..],
            "This format is not supported yet (.pdf)",
        ),
        ("data.xyz", b"?", ".xyz files are not supported"),
        ("gbk.txt", b"\xc4\xe3", "gbk.txt is not UTF-8 text"),
    ];
    for (name, data, start) in cases {
        let err = h
            .client
            .chat(request("", vec![document(name, data)], false))
            .await
            .expect_err("refused");
        assert!(err.message().starts_with(start), "{}", err.message());
    }
    assert!(fake.requests().is_empty());
    h.stop().await;
}

#[tokio::test]
async fn an_audio_file_sent_as_a_document_is_transcribed_like_a_voice_note() {
    let fake = FakeLlm::start().await;
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    let toml = speech_toml(&speech.base(), SPEECH_KEY, false);
    let mut h = Harness::start(TestConfig::new(&fake.url(), &toml)).await;
    speech.set_transcript("周五之前\n交报告");
    fake.push(Script::text("记住了。"));
    let mp3 = b"ID3\x04\x00fake-mp3-bytes";
    let events = turn_with(
        &mut h.client,
        request("帮我记一下", vec![document("录音/Talk.MP3", mp3)], false),
    )
    .await;
    assert_eq!(completed(&events).text, "记住了。");

    let stt = speech.requests_to("/v1/audio/transcriptions");
    assert_eq!(stt.len(), 1);
    let (file_name, content_type, data) = stt[0].file.clone().unwrap();
    assert_eq!(
        (file_name.as_str(), content_type.as_str()),
        ("voice.mp3", "audio/mpeg")
    );
    assert_eq!(data, mp3);
    let texts = user_texts(&fake, 0);
    let heard = "[语音: 周五之前 交报告]".to_owned();
    assert!(texts.contains(&heard), "{texts:#?}");
    assert_eq!(texts.last().unwrap(), "帮我记一下");
    let transcript = stored(&h.cfg, session_id(&events)).await;
    assert_eq!(transcript[0].text(), "[语音已处理]帮我记一下");
    let kept = downloads(&h.cfg);
    assert_eq!(kept.len(), 1);
    assert!(kept[0].extension().is_some_and(|e| e == "mp3"), "{kept:?}");
    h.stop().await;
}

#[tokio::test]
async fn without_stt_an_audio_document_is_refused_as_voice_not_set_up() {
    for (locale, message) in [
        ("zh", "语音消息未启用：请在 config.toml 中配置 [stt]"),
        ("en", "Voice messages are not set up: configure [stt]"),
    ] {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::new(&fake.url(), "");
        set_locale(&cfg, locale);
        let mut h = Harness::start(cfg).await;
        for name in ["talk.mp3", "memo.m4a", "note.wav"] {
            let err = h
                .client
                .chat(request("", vec![document(name, b"audio")], false))
                .await
                .expect_err("refused");
            assert_eq!(err.code(), Code::FailedPrecondition, "{name}");
            assert!(err.message().starts_with(message), "{}", err.message());
        }
        assert!(fake.requests().is_empty(), "no model call");
        assert!(downloads(&h.cfg).is_empty(), "nothing kept");
        h.stop().await;
    }
}
