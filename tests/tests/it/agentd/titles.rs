//! The titles client against the fake, for both provider kinds: a non-streaming call, and
//! clean-up of what reasoning models answer (`<think>` blocks, quotes, punctuation).

use std::collections::BTreeMap;
use std::time::Duration;

use kernel_agentd::llm::LlmError;
use kernel_agentd::llm::titles::TitlesClient;
use kernel_common::Secret;
use kernel_common::config::ProviderKind;
use tests::fake_llm::{ErrorKind, FAKE_KEY, FakeLlm, HttpError, Reply, Script};
use tests::provider_calls::http;

#[tokio::test]
async fn claude_titles_are_non_streaming_and_cleaned() {
    let fake = FakeLlm::start().await;
    let mut cfg = fake.titles_config(ProviderKind::Claude);
    cfg.headers = BTreeMap::from([(
        "x-title-header".to_owned(),
        Secret::new("title-header-secret"),
    )]);
    let client = TitlesClient::new(&cfg, &http()).unwrap();
    fake.push(
        Reply::text("\"Rust 异步入门\"。").thinking("The user asks about async Rust.", "sig"),
    );
    let title = client
        .title("怎么学习 Rust 的 async？", "先从 Future 讲起……")
        .await
        .unwrap();
    assert_eq!(title, "Rust 异步入门");
    let req = fake.last_request().unwrap();
    assert_eq!(req.path, "/v1/messages");
    assert!(!req.is_stream(), "titles are a non-streaming call");
    assert_eq!(req.body["model"], "fake-titles-model");
    assert_eq!(req.body["max_tokens"], 64);
    assert_eq!(req.header("x-api-key"), Some(FAKE_KEY));
    assert_eq!(req.header("x-title-header"), Some("title-header-secret"));
    let prompt = req.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        prompt.contains("怎么学习 Rust 的 async？") && prompt.contains("先从 Future 讲起"),
        "{prompt}"
    );
}

#[tokio::test]
async fn openai_titles_strip_think_blocks() {
    let fake = FakeLlm::start().await;
    let client =
        TitlesClient::new(&fake.titles_config(ProviderKind::OpenAiCompat), &http()).unwrap();
    fake.push(Script::text("<think>\nThe user wants a trip plan.\nKeep it short.\n</think>\n\nTitle: Weekend trip to Kyoto."));
    let title = client
        .title("Plan a weekend in Kyoto", "Day 1: …")
        .await
        .unwrap();
    assert_eq!(title, "Weekend trip to Kyoto");
    let req = fake.last_request().unwrap();
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.body["stream"], false);
    assert!(req.body.get("stream_options").is_none());
    assert_eq!(req.body["max_tokens"], 64);
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {FAKE_KEY}").as_str())
    );
}

#[tokio::test]
async fn an_unclosed_think_block_leaves_no_title() {
    let fake = FakeLlm::start().await;
    let client =
        TitlesClient::new(&fake.titles_config(ProviderKind::OpenAiCompat), &http()).unwrap();
    fake.push(Script::text(
        "<think>I ran out of tokens while thinking about",
    ));
    let e = client.title("hi", "hello").await.unwrap_err();
    assert!(
        matches!(&e, LlmError::Stream { message } if message.contains("empty title")),
        "{e:?}"
    );
}

#[tokio::test]
async fn long_titles_are_capped() {
    let fake = FakeLlm::start().await;
    let client = TitlesClient::new(&fake.titles_config(ProviderKind::Claude), &http()).unwrap();
    fake.push(Script::text(
        "这是一个非常非常非常非常非常非常非常非常非常非常非常非常长的标题，远远超过二十个字",
    ));
    let title = client.title("a", "b").await.unwrap();
    assert!(
        title.chars().count() <= kernel_agentd::llm::titles::MAX_TITLE_CHARS,
        "{title}"
    );
}

#[tokio::test]
async fn title_errors_are_typed_and_redacted() {
    for kind in [ProviderKind::Claude, ProviderKind::OpenAiCompat] {
        let fake = FakeLlm::start().await;
        let client = TitlesClient::new(&fake.titles_config(kind), &http()).unwrap();
        fake.push(HttpError::new(ErrorKind::RateLimited { retry_after: 5 }));
        let e = client.title("a", "b").await.unwrap_err();
        assert!(
            matches!(e, LlmError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(5)),
            "{e:?}"
        );
        fake.push(HttpError::new(ErrorKind::Unauthorized));
        let e = client.title("a", "b").await.unwrap_err();
        assert!(matches!(e, LlmError::Authentication { .. }), "{e:?}");
        for text in [e.to_string(), format!("{e:?}"), format!("{client:?}")] {
            assert!(!text.contains(FAKE_KEY), "{text}");
        }
        fake.push(HttpError::new(ErrorKind::Overloaded));
        assert!(client.title("a", "b").await.unwrap_err().is_transient());
    }
}
