//! Images through the gRPC service: base64 image content at the model in both provider formats,
//! `[图片已处理]` in the stored history, a copy under `downloads/`, the 20 MB refusal, and the
//! smaller Claude limit (5 MB of base64, 3.75 MB of image): an image over it that cannot be
//! decoded (these are a PNG signature and zeros) is refused before any model call; a real one is
//! scaled down (tests/tests/it/tg/media.rs).

use kernel_agentd::conversation::{Block, Role};
use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tests::chat::{KINDS, completed, session_id, stored, turn, wire_messages};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::media::{PNG, base64, document, downloads, image, request, set_locale, turn_with};
use tonic::Code;

/// The largest image Claude takes: its base64 is exactly 5 MB.
const CLAUDE_MAX: usize = 3_932_160;

/// Whether the turn reached the model: bodies this large are refused by the fake itself (as
/// many gateways do), so the turn fails with its 413.
fn reached_the_model(events: &[Event]) -> bool {
    matches!(
        events,
        [Event::Started(_), Event::Failed(failed)] if failed.message.contains("413")
    )
}

/// A PNG of `len` bytes (the signature, then zeros).
fn png_of(len: usize) -> Vec<u8> {
    let mut png = PNG.to_vec();
    png.resize(len, 0);
    png
}

/// The image parts of the newest user message of a request body, as (media type, base64 data).
fn sent_images(kind: &str, body: &Value) -> Vec<(String, String)> {
    let messages = wire_messages(body);
    let last = messages.last().expect("a user message");
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().cloned().unwrap_or_default();
    parts
        .iter()
        .filter_map(|p| match kind {
            "claude" if p["type"] == "image" => {
                assert_eq!(p["source"]["type"], "base64", "{p}");
                Some((
                    p["source"]["media_type"].as_str()?.to_owned(),
                    p["source"]["data"].as_str()?.to_owned(),
                ))
            }
            "openai_compat" if p["type"] == "image_url" => {
                let url = p["image_url"]["url"].as_str()?;
                let rest = url.strip_prefix("data:")?;
                let (mime, data) = rest.split_once(";base64,")?;
                Some((mime.to_owned(), data.to_owned()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_image_reaches_both_providers_as_base64_and_is_slimmed_in_history() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(TestConfig::with_kind(kind, &fake.url(), "")).await;
        fake.push(Script::text("一只猫。"));
        // Telegram calls every photo JPEG; the bytes say PNG, and the providers check.
        let events = turn_with(
            &mut h.client,
            request("图里是什么？", vec![image("image/jpeg", PNG)], false),
        )
        .await;
        assert_eq!(completed(&events).text, "一只猫。", "{kind}");

        let body = fake.requests()[0].body.clone();
        assert_eq!(
            sent_images(kind, &body),
            [("image/png".to_owned(), base64(PNG))],
            "{kind}: {body}"
        );
        assert!(body.to_string().contains("图里是什么？"), "{kind}");

        let transcript = stored(&h.cfg, session_id(&events)).await;
        assert_eq!(transcript[0].role, Role::User);
        assert_eq!(
            transcript[0].content,
            [Block::text("[图片已处理]"), Block::text("图里是什么？")],
            "{kind}"
        );

        fake.push(Script::text("好的"));
        completed(&turn(&mut h.client, "再说一遍").await);
        let body = fake.requests()[1].body.clone();
        assert!(sent_images(kind, &body).is_empty());
        assert!(body.to_string().contains("[图片已处理]"), "{kind}: {body}");

        let files = downloads(&h.cfg);
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].extension().is_some_and(|e| e == "png"));
        assert_eq!(std::fs::read(&files[0]).unwrap(), PNG);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        h.stop().await;
    }
}

#[tokio::test]
async fn an_image_sent_as_a_file_is_an_image() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let events = turn_with(
        &mut h.client,
        request("", vec![document("截图.PNG", PNG)], false),
    )
    .await;
    completed(&events);
    let body = fake.requests()[0].body.clone();
    assert_eq!(
        sent_images("claude", &body),
        [("image/png".to_owned(), base64(PNG))]
    );
    let refused = h
        .client
        .chat(request(
            "",
            vec![document("fake.jpg", b"not a jpeg")],
            false,
        ))
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(refused.message(), "文件 fake.jpg 不是有效的图片。");
    h.stop().await;
}

#[tokio::test]
async fn a_21_mb_image_is_refused_before_any_model_call_and_nothing_is_kept() {
    let fake = FakeLlm::start().await;
    // OpenAI-compatible: Claude's own, smaller limit would refuse the 20 MB image below.
    let mut h = Harness::start(TestConfig::with_kind("openai_compat", &fake.url(), "")).await;
    let mut big = PNG.to_vec();
    big.resize(21 * 1024 * 1024, 0);
    let refused = h
        .client
        .chat(request("看看", vec![image("image/png", &big)], false))
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(refused.message(), "图片太大：最大 20 MB。");
    assert!(fake.requests().is_empty(), "no model call");
    assert!(downloads(&h.cfg).is_empty(), "nothing kept");

    // Nothing was stored: the next turn's session holds only its own round.
    let events = turn(&mut h.client, "你好").await;
    let transcript = stored(&h.cfg, session_id(&events)).await;
    assert_eq!(transcript.len(), 2, "{transcript:?}");
    assert_eq!(transcript[0].text(), "你好");

    // Exactly 20 MB is accepted (what the endpoint then makes of it is its business: the fake,
    // like many gateways, refuses bodies that large).
    let mut exactly = PNG.to_vec();
    exactly.resize(20 * 1024 * 1024, 0);
    let events = turn_with(
        &mut h.client,
        request("", vec![image("image/png", &exactly)], false),
    )
    .await;
    session_id(&events);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        downloads(&h.cfg)
            .iter()
            .any(|f| { std::fs::metadata(f).unwrap().len() == 20 * 1024 * 1024 })
    );
    h.stop().await;
}

#[tokio::test]
async fn claude_refuses_a_6_mb_image_before_any_model_call_in_the_owners_language() {
    let six = png_of(6 * 1024 * 1024);
    for (locale, message) in [
        (
            "zh",
            "图片太大：Claude 只接受不超过 3.75 MB 的图片。请压缩或截图后再发送。",
        ),
        (
            "en",
            "The image is too large: Claude takes images up to 3.75 MB. Compress it or send a \
             screenshot instead.",
        ),
    ] {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::with_kind("claude", &fake.url(), "");
        set_locale(&cfg, locale);
        let mut h = Harness::start(cfg).await;
        let refused = h
            .client
            .chat(request("看看", vec![image("image/png", &six)], false))
            .await
            .expect_err("refused");
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert_eq!(refused.message(), message);
        assert!(fake.requests().is_empty(), "no model call");
        assert!(downloads(&h.cfg).is_empty(), "nothing kept");

        // One byte more than the largest image Claude takes is refused; that image starts a turn.
        let refused = h
            .client
            .chat(request(
                "",
                vec![image("image/png", &png_of(CLAUDE_MAX + 1))],
                false,
            ))
            .await
            .expect_err("refused");
        assert_eq!(refused.message(), message);
        let events = turn_with(
            &mut h.client,
            request("", vec![image("image/png", &png_of(CLAUDE_MAX))], false),
        )
        .await;
        assert!(reached_the_model(&events), "{locale}: {events:?}");
        h.stop().await;
    }
}

#[tokio::test]
async fn an_openai_compatible_provider_is_sent_the_same_6_mb_image() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::with_kind("openai_compat", &fake.url(), "")).await;
    let six = png_of(6 * 1024 * 1024);
    let events = turn_with(
        &mut h.client,
        request("看看", vec![image("image/png", &six)], false),
    )
    .await;
    assert!(reached_the_model(&events), "{events:?}");
    let files = downloads(&h.cfg);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().len(),
        six.len() as u64
    );
    h.stop().await;
}

/// A `w`×`h` PNG of noise: incompressible, so about 3 bytes a pixel.
fn noise_png(w: u32, h: u32) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let img = ::image::RgbImage::from_fn(w, h, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let b = seed.to_le_bytes();
        ::image::Rgb([b[0], b[1], b[2]])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, ::image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn an_openai_compatible_provider_with_an_image_limit_gets_the_image_scaled_to_it() {
    use base64::Engine as _;
    const LIMIT: usize = 200_000;
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::with_kind(
        "openai_compat",
        &fake.url(),
        &format!("max_image_bytes = {LIMIT}\nmax_image_side_px = 300\n"),
    );
    let mut h = Harness::start(cfg).await;
    fake.push(Script::text("scaled"));
    let big = noise_png(600, 400);
    assert!(big.len() > 3 * LIMIT, "{}", big.len());
    let events = turn_with(
        &mut h.client,
        request("看看", vec![image("image/png", &big)], false),
    )
    .await;
    assert_eq!(completed(&events).text, "scaled", "{events:?}");
    let body = fake.last_request().unwrap().body;
    let images = sent_images("openai_compat", &body);
    assert_eq!(images.len(), 1, "{body}");
    let data = base64::engine::general_purpose::STANDARD
        .decode(&images[0].1)
        .unwrap();
    assert!(data.len() <= LIMIT, "{}", data.len());
    let scaled = ::image::load_from_memory(&data).unwrap();
    assert!(
        scaled.width() <= 300 && scaled.height() <= 300,
        "{scaled:?}"
    );
    // The aspect ratio is kept (3:2).
    let ratio = f64::from(scaled.width()) / f64::from(scaled.height());
    assert!((ratio - 1.5).abs() < 0.02, "{ratio}");
    h.stop().await;
}
