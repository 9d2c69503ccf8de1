//! Inline reasoning from an OpenAI-compatible server (`<think>…</think>` in `content`, the tags
//! split across the fake's 3-character deltas) through the real service: none of it is streamed
//! or stored as answer text or sent back in the next request; it comes back as the turn's
//! reasoning (shown by kernel-tg only with `telegram.show_reasoning`, see `tg_drafts`).

use kernel_agentd::conversation::Block;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{self, completed, streamed_text, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;

const THOUGHT: &str = "the owner wants tea; secret plan";

#[tokio::test(flavor = "multi_thread")]
async fn a_think_block_split_across_deltas_is_reasoning_not_answer() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::with_kind("openai_compat", &fake.url(), "");
    let mut h = Harness::start(cfg).await;
    fake.push(Script::text(format!(
        "<think>{THOUGHT}</think>\n\nGreen tea it is."
    )));
    let events = turn(&mut h.client, "what tea?").await;
    let done = completed(&events);
    assert_eq!(done.text, "Green tea it is.");
    assert_eq!(done.reasoning, THOUGHT);
    assert_eq!(streamed_text(&events), "Green tea it is.");
    assert!(
        events.iter().all(|e| match e {
            Event::TextDelta(d) => !d.text.contains("think") && !d.text.contains('<'),
            _ => true,
        }),
        "{events:?}"
    );

    fake.push(Script::text("And again."));
    completed(&turn(&mut h.client, "more?").await);
    let next = fake.last_request().unwrap().raw_body;
    assert!(next.contains("Green tea it is."), "{next}");
    assert!(!next.contains("secret plan"), "never recalled: {next}");

    let sid = chat::session_id(&events);
    let cfg = h.stop().await;
    let stored = chat::stored(&cfg, sid).await;
    for message in &stored {
        for block in &message.content {
            if let Block::Text { text } = block {
                assert!(
                    !text.contains("secret plan") && !text.contains("<think"),
                    "{text}"
                );
            }
        }
    }
    assert!(stored.iter().any(|m| m.text() == "Green tea it is."));
}
