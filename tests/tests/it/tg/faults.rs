//! Provider faults as the owner sees them through both binaries: a refused key, an overloaded
//! provider, a stalled or broken stream each end with a clear message in place of the
//! placeholder, within the stall timeout, never a hang.

use std::time::{Duration, Instant};

use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, text_of};

const STALL_SECS: u64 = 2;

/// The owner asks; returns what the placeholder finally says and how long that took.
async fn failure_after(stack: &Stack, script: Script) -> (String, Duration) {
    stack.llm.push(script);
    let since = stack.telegram.call_count();
    let asked = Instant::now();
    stack.owner_says("hello?");
    let told = stack
        .telegram
        .wait_for_call_since(
            since,
            "editMessageText",
            |c| text_of(c).starts_with("⚠️"),
            PROMPT,
        )
        .await;
    (text_of(&told), asked.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_provider_fault_reaches_the_owner_as_a_clear_message() {
    let stall = format!(
        "max_tokens = 1024\nstream_idle_timeout_secs = {STALL_SECS}\nfirst_byte_timeout_secs = {STALL_SECS}"
    );
    let stack =
        Stack::start_edited("claude", "", |t| t.replacen("max_tokens = 1024", &stall, 1)).await;
    let refused =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let (text, _) = failure_after(&stack, Script::raw_error(401, refused)).await;
    assert!(text.contains("HTTP 401"), "{text}");

    let (text, took) = failure_after(&stack, Script::stall()).await;
    assert!(
        took < Duration::from_secs(STALL_SECS + 8),
        "stall reported after {took:?}"
    );
    assert!(!text.is_empty());

    let broken = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"fake-model\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n";
    let (text, _) = failure_after(&stack, Script::raw_sse(broken)).await;
    assert!(!text.is_empty());

    // After all that, a normal turn still works and nothing leaked.
    stack.llm.push(Script::text("all good"));
    stack.owner_says("again");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "all good", PROMPT)
        .await;
    stack.assert_no_secrets();
}
