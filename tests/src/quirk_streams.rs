//! Recorded streams of real OpenAI-compatible and Anthropic servers (the fixtures in
//! `kernel-agentd/tests/fixtures/streams/`), for the fake LLM to send verbatim
//! ([`quirk`] → a `Script::raw_sse`).

use crate::fake_llm::Script;

/// The fixture `name` (e.g. `azure_filters.sse`) as a 200 `text/event-stream` script.
pub fn quirk(name: &str) -> Script {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernel-agentd/tests/fixtures/streams")
        .join(name);
    let body =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Script::raw_sse(body)
}
