//! Token estimates that are honest for CJK text: one token per CJK (or other wide) character,
//! about four bytes per token for the rest, a small overhead per block and message. A session's
//! estimates are corrected by the input tokens the provider reported for its previous call
//! ([`Calibration`]).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::conversation::{Block, Message, ToolSpec};

/// Tokens a message costs beyond its content (role, framing).
const PER_MESSAGE: u64 = 4;
/// Tokens a block costs beyond its content (type, ids, JSON framing).
const PER_BLOCK: u64 = 8;
/// What an image costs (providers bill ~1.5k tokens for a typical photo).
const PER_IMAGE: u64 = 1_600;

/// Whether `c` is written as about one token per character (CJK, kana, Hangul, full-width forms).
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF
        | 0x2E80..=0x9FFF
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7FF
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFFEF
        | 0x20000..=0x3FFFF)
}

/// The estimated tokens of `text`. Runs once per message and request, over the whole context:
/// ASCII bytes are counted without decoding, only the other characters are decoded.
pub(crate) fn text_tokens(text: &str) -> u64 {
    let (mut wide, mut other_bytes) = (0u64, 0u64);
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest.bytes().take_while(u8::is_ascii).count();
        other_bytes += ascii as u64;
        rest = &rest[ascii..];
        let Some(c) = rest.chars().next() else { break };
        if is_wide(c) {
            wide += 1;
        } else {
            other_bytes += c.len_utf8() as u64;
        }
        rest = &rest[c.len_utf8()..];
    }
    wide + other_bytes.div_ceil(4)
}

/// The estimated tokens of one block.
pub(crate) fn block_tokens(block: &Block) -> u64 {
    PER_BLOCK
        + match block {
            Block::Text { text } => text_tokens(text),
            Block::Image { .. } => PER_IMAGE,
            Block::ToolCall { name, input, .. } => {
                text_tokens(name) + text_tokens(&input.to_string())
            }
            Block::ToolResult { content, .. } => text_tokens(content),
            Block::Reasoning { data, .. } => text_tokens(&data.to_string()),
        }
}

/// The estimated tokens of one message.
pub(crate) fn message_tokens(message: &Message) -> u64 {
    PER_MESSAGE + message.content.iter().map(block_tokens).sum::<u64>()
}

/// The estimated tokens of messages.
pub(crate) fn messages_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(message_tokens).sum()
}

/// The estimated tokens of the stable prefix: system prompt and tool specs.
pub(crate) fn prefix_tokens(system: &str, tools: &[ToolSpec]) -> u64 {
    text_tokens(system)
        + tools
            .iter()
            .map(|t| {
                PER_BLOCK
                    + text_tokens(&t.name)
                    + text_tokens(&t.description)
                    + text_tokens(&t.input_schema.to_string())
            })
            .sum::<u64>()
}

/// Per session: how much the provider's count exceeds the estimate (≥ 1, so an estimate is only
/// ever raised): a higher report is taken at once, a lower one moves it down by [`DECAY`].
/// Also per session: the largest estimate a request may have after the provider refused one as
/// too long (a configured window larger than the real one is learnt from its first refusal).
#[derive(Debug, Default)]
pub(crate) struct Calibration {
    factors: Mutex<HashMap<i64, f64>>,
    ceilings: Mutex<HashMap<i64, u64>>,
}

/// After a refusal, requests stay this far below the refused one's estimate.
const REFUSED_MARGIN: f64 = 0.85;

/// How far one lower report moves the factor down.
const DECAY: f64 = 0.2;
/// The largest correction taken from one report (a broken usage report must not starve a session).
const MAX_FACTOR: f64 = 4.0;

impl Calibration {
    /// Records that a request estimated at `estimated` tokens was billed `reported` input tokens
    /// (uncached + cache read + cache write).
    pub(crate) fn observe(&self, session_id: i64, estimated: u64, reported: u64) {
        if estimated == 0 || reported == 0 {
            return;
        }
        let seen = (reported as f64 / estimated as f64).clamp(1.0, MAX_FACTOR);
        let mut factors = self.lock();
        let factor = factors.entry(session_id).or_insert(1.0);
        // Up at once, down slowly: requests of one session differ in how much framing they
        // carry, and an estimate that is too low costs a refused request.
        *factor = if seen >= *factor {
            seen
        } else {
            *factor * (1.0 - DECAY) + seen * DECAY
        };
    }

    /// Records that the provider refused a request estimated at `estimated` tokens as too long.
    pub(crate) fn refused(&self, session_id: i64, estimated: u64) {
        let ceiling = (estimated as f64 * REFUSED_MARGIN) as u64;
        let mut ceilings = self.ceilings.lock().unwrap_or_else(|e| e.into_inner());
        let c = ceilings.entry(session_id).or_insert(u64::MAX);
        *c = (*c).min(ceiling);
    }

    /// The learnt ceiling of `session_id`'s estimates, if a request was refused.
    pub(crate) fn ceiling(&self, session_id: i64) -> Option<u64> {
        let ceilings = self.ceilings.lock().unwrap_or_else(|e| e.into_inner());
        ceilings.get(&session_id).copied()
    }

    /// `estimate` corrected for `session_id`.
    pub(crate) fn correct(&self, session_id: i64, estimate: u64) -> u64 {
        let factor = self.lock().get(&session_id).copied().unwrap_or(1.0);
        (estimate as f64 * factor).ceil() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, f64>> {
        self.factors.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The estimate decoding every character, which `text_tokens` must equal.
    fn per_char(text: &str) -> u64 {
        let wide = text.chars().filter(|&c| is_wide(c)).count() as u64;
        let other: usize = text
            .chars()
            .filter(|&c| !is_wide(c))
            .map(char::len_utf8)
            .sum();
        wide + (other as u64).div_ceil(4)
    }

    proptest! {
        #[test]
        fn the_ascii_fast_path_counts_like_decoding_every_character(text in "(?s).{0,200}", mixed in "[a-z 你好こんにちは한글é€😀\\n]{0,120}") {
            prop_assert_eq!(text_tokens(&text), per_char(&text));
            prop_assert_eq!(text_tokens(&mixed), per_char(&mixed));
        }
    }

    #[test]
    fn cjk_counts_one_token_per_character_and_ascii_about_four_bytes() {
        assert_eq!(text_tokens("你好世界"), 4);
        assert_eq!(text_tokens("こんにちは"), 5);
        assert_eq!(text_tokens("abcdefgh"), 2);
        assert_eq!(text_tokens("部署 to prod"), 2 + 2);
        // chars/4 would give 1 for four Chinese characters.
        assert!(text_tokens("上下文管理") > "上下文管理".chars().count() as u64 / 4);
    }

    #[test]
    fn calibration_only_raises_and_is_per_session() {
        let c = Calibration::default();
        assert_eq!(c.correct(1, 100), 100);
        c.observe(1, 100, 150);
        assert_eq!(c.correct(1, 100), 150);
        assert_eq!(c.correct(2, 100), 100);
        c.observe(1, 100, 50);
        assert_eq!(c.correct(1, 100), 140, "down slowly: 1.5 × 0.8 + 1.0 × 0.2");
        for _ in 0..50 {
            c.observe(1, 100, 50);
        }
        assert!(
            (100..=101).contains(&c.correct(1, 100)),
            "never below the estimate"
        );
        c.observe(1, 100, 100_000);
        assert_eq!(c.correct(1, 100), 400, "capped");
        assert_eq!(c.ceiling(1), None);
        c.refused(1, 10_000);
        c.refused(1, 20_000);
        assert_eq!(
            c.ceiling(1),
            Some(8_500),
            "the lowest refused estimate, with a margin"
        );
    }
}
