//! Streams as real servers send them, decoded (tests only): recorded byte streams in
//! `kernel-agentd/tests/fixtures/streams/`, written from each server's documented wire format
//! and known quirks — DeepSeek `reasoning_content`, Qwen/DashScope (usage in a last chunk with
//! empty `choices`), Ollama (a tool call whole in one chunk, no usage), vLLM (inline `<think>`,
//! usage in the last chunk), OpenRouter (`:` comment keep-alives, `reasoning`, an error object
//! inside a 200 stream), Azure OpenAI (a first chunk with empty `choices` and content-filter
//! results) and Anthropic (`ping` events, a mid-stream `error` event).

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::StreamExt;

use super::sse::Decoder;
use super::{LlmError, ModelResponse, StopReason, StreamEvent, reasoning_text};

/// Feeds `fixture` (split into small byte chunks) through `decoder` as the SSE driver does:
/// the answer text streamed and the response or error.
async fn decode(
    fixture: &str,
    mut decoder: impl Decoder,
) -> (String, Result<ModelResponse, LlmError>) {
    let bytes = fixture.as_bytes().to_vec();
    let chunks: Vec<Result<Bytes, std::convert::Infallible>> = bytes
        .chunks(7)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let mut events = futures::stream::iter(chunks).eventsource();
    let mut text = String::new();
    while let Some(event) = events.next().await {
        let event = event.expect("well-formed SSE");
        let mut out = Vec::new();
        let done = decoder.event(&event, &mut out);
        for e in out {
            if let StreamEvent::TextDelta(t) = e {
                text.push_str(&t);
            }
        }
        match done {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return (text, Err(e)),
        }
    }
    (text, decoder.finish())
}

async fn openai(fixture: &str) -> (String, Result<ModelResponse, LlmError>) {
    decode(fixture, super::openai::decode::OpenAiDecoder::default()).await
}

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/streams/",
            $name
        ))
    };
}

#[tokio::test]
async fn deepseek_reasoning_content_is_reasoning_and_usage_is_read() {
    let (text, r) = openai(fixture!("deepseek_reasoning.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "Green tea.");
    assert_eq!(r.message.text(), "Green tea.");
    assert_eq!(reasoning_text(&r.message), "The owner likes tea.");
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (12, 9));
    assert_eq!(r.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn qwen_dashscope_usage_arrives_in_a_last_chunk_without_choices() {
    let (text, r) = openai(fixture!("qwen_dashscope.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "绿茶");
    assert_eq!(reasoning_text(&r.message), "想一想");
    // 20 prompt tokens, 8 of them read from the cache.
    assert_eq!(
        (
            r.usage.input_tokens,
            r.usage.cache_read_tokens,
            r.usage.output_tokens
        ),
        (12, 8, 4)
    );
}

#[tokio::test]
async fn ollama_sends_a_whole_tool_call_in_one_chunk_and_no_usage() {
    let (text, r) = openai(fixture!("ollama_tools.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "");
    let calls: Vec<_> = r.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].id, calls[0].name), ("call_x1", "memory_search"));
    assert_eq!(calls[0].input["query"], "tea");
    assert_eq!(r.stop_reason, StopReason::ToolUse);
    assert_eq!(r.usage.input_tokens + r.usage.output_tokens, 0);
}

#[tokio::test]
async fn vllm_inline_think_is_reasoning_and_usage_comes_last() {
    let (text, r) = openai(fixture!("vllm_usage.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "Hello");
    assert_eq!(r.message.text(), "Hello");
    assert_eq!(reasoning_text(&r.message).trim(), "short");
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (10, 7));
}

#[tokio::test]
async fn openrouter_comments_are_skipped_and_an_error_inside_a_200_stream_is_transient() {
    let (text, r) = openai(fixture!("openrouter_ok.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "Hi there");
    assert_eq!(reasoning_text(&r.message), "Think.");
    assert_eq!(r.usage.output_tokens, 3);

    let (text, r) = openai(fixture!("openrouter_error.sse")).await;
    assert_eq!(text, "");
    let e = r.unwrap_err();
    assert!(
        matches!(&e, LlmError::Overloaded { status: 502, message } if message.contains("Provider returned error")),
        "{e:?}"
    );
    assert!(
        super::retry::RetryReason::of(&e).is_some(),
        "retried before any text"
    );
}

#[tokio::test]
async fn azure_prompt_filter_chunk_without_choices_is_skipped() {
    let (text, r) = openai(fixture!("azure_filters.sse")).await;
    let r = r.unwrap();
    assert_eq!(text, "Hello");
    assert_eq!(r.message.text(), "Hello");
    assert_eq!(r.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn anthropic_pings_are_skipped_and_a_mid_stream_overload_is_retried() {
    let (text, r) = decode(
        fixture!("anthropic_ping_error.sse"),
        super::claude::decode::ClaudeDecoder::default(),
    )
    .await;
    assert_eq!(text, "");
    let e = r.unwrap_err();
    assert!(
        matches!(e, LlmError::Overloaded { status: 529, .. }),
        "{e:?}"
    );
    assert_eq!(
        super::retry::RetryReason::of(&e).map(super::retry::RetryReason::code),
        Some("overloaded")
    );
}
