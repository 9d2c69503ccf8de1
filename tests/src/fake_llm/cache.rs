//! A minimal model of Anthropic prompt caching, for measuring what a client's cache layout saves
//! (off unless [`super::FakeLlm::model_prompt_cache`] turns it on).
//!
//! The model, deliberately simple:
//! - A request body is reduced to its canonical form: the raw JSON with every
//!   `,"cache_control":{"type":"ephemeral"}` removed. Each removed marker is a breakpoint; the
//!   canonical bytes before it are a cacheable prefix.
//! - Cache read: the longest prefix written by an earlier request that the canonical body starts
//!   with and that ends at or before this request's last breakpoint (Anthropic also checks
//!   earlier block boundaries; byte prefixes approximate that).
//! - Cache write: from the end of the read up to the last breakpoint. Every breakpoint's prefix
//!   is remembered for later requests. Input: everything after the last breakpoint.
//! - Tokens are estimated as UTF-8 bytes / 4, rounded up. No minimum cacheable length, no TTL.

use super::script::FakeUsage;

const MARKER: &str = r#","cache_control":{"type":"ephemeral"}"#;

/// Cached prefixes seen so far.
#[derive(Debug, Default)]
pub(crate) struct PromptCache {
    prefixes: Vec<String>,
}

/// Estimated tokens of `bytes` bytes.
pub fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

impl PromptCache {
    /// Accounts one request body: returns `usage` with `input`, `cache_read` and `cache_write`
    /// replaced by the model's numbers (`output` kept), and remembers its prefixes.
    pub(crate) fn account(&mut self, raw_body: &str, usage: FakeUsage) -> FakeUsage {
        let (canonical, breakpoints) = canonical(raw_body);
        let last = breakpoints.last().copied().unwrap_or(0);
        let read = self
            .prefixes
            .iter()
            .filter(|p| p.len() <= last && canonical.starts_with(p.as_str()))
            .map(String::len)
            .max()
            .unwrap_or(0);
        for &end in &breakpoints {
            let prefix = &canonical[..end];
            if !self.prefixes.iter().any(|p| p == prefix) {
                self.prefixes.push(prefix.to_owned());
            }
        }
        FakeUsage {
            input: estimate_tokens(canonical.len() - last),
            cache_read: estimate_tokens(read),
            cache_write: estimate_tokens(last - read),
            output: usage.output,
        }
    }
}

/// The canonical body and the canonical offsets of its breakpoints, in order.
fn canonical(raw: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(raw.len());
    let mut breakpoints = Vec::new();
    let mut rest = raw;
    while let Some(at) = rest.find(MARKER) {
        out.push_str(&rest[..at]);
        breakpoints.push(out.len());
        rest = &rest[at + MARKER.len()..];
    }
    out.push_str(rest);
    (out, breakpoints)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(messages: &[&str], breakpoint_after: usize) -> String {
        let mut parts = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let mark = if i + 1 == breakpoint_after {
                MARKER
            } else {
                ""
            };
            parts.push(format!(r#"{{"text":"{m}"{mark}}}"#));
        }
        format!(
            r#"{{"system":[{{"text":"sys"{MARKER}}}],"messages":[{}]}}"#,
            parts.join(",")
        )
    }

    #[test]
    fn a_growing_conversation_reads_what_the_previous_request_wrote() {
        let mut cache = PromptCache::default();
        let first = cache.account(&body(&["hello"], 0), FakeUsage::default());
        assert_eq!(first.cache_read, 0);
        assert!(first.cache_write > 0 && first.input > 0);
        let second = cache.account(&body(&["hello", "answer", "next"], 2), FakeUsage::default());
        assert_eq!(second.cache_read, first.cache_write);
        assert!(second.cache_write > 0);
        let third = cache.account(
            &body(&["hello", "answer", "next", "again", "more"], 4),
            FakeUsage::default(),
        );
        let (canonical_second, bps) = canonical(&body(&["hello", "answer", "next"], 2));
        assert_eq!(
            third.cache_read,
            estimate_tokens(bps[1]),
            "{canonical_second}"
        );
    }

    #[test]
    fn a_changed_start_reads_nothing() {
        let mut cache = PromptCache::default();
        cache.account(&body(&["a", "b", "c"], 2), FakeUsage::default());
        let other = cache.account(
            &body(&["a", "b", "c"], 2).replace("sys", "SYS"),
            FakeUsage::default(),
        );
        assert_eq!(other.cache_read, 0);
        assert!(other.cache_write > 0);
    }
}
