//! Folding under the token budget: how many of the oldest stored rounds to fold into the session
//! summary, and how to shrink the current turn when its own tool outputs outgrow the budget.
//!
//! The request is laid out as: stable prefix (system + tools, never trimmed), the session summary
//! (first block of the history), the recent rounds, the current message. Rounds are folded only
//! when they exceed the `context_rounds` ceiling or the budget, and then down to a lower mark
//! (hysteresis), so the history prefix stays byte-identical for many turns between folds (prompt
//! caching). A fold takes whole rounds (a tool call never leaves without its result) and always
//! keeps the last [`KEEP_ROUNDS`] whole.

use super::context::starts_round;
use super::slim::slim_block;
use super::tokens::{message_tokens, messages_tokens};
use crate::conversation::{Block, Message};

/// Rounds never folded (the most recent ones).
pub(crate) const KEEP_ROUNDS: usize = 2;

/// After a fold, history fills at most this share of the budget …
const FOLD_TO_BUDGET: f64 = 0.6;
/// … and holds at most this share of the rounds ceiling.
const FOLD_TO_ROUNDS: f64 = 0.75;

/// How many leading messages of `history` (stored, oldest first, starting at a round) to fold
/// so that the request fits: `fixed` tokens (prefix, summary, current message) plus the history
/// within `token_budget`, and at most `ceiling` rounds. 0 when nothing needs to fold.
pub(crate) fn fold_count(
    history: &[Message],
    fixed: u64,
    token_budget: u64,
    ceiling: usize,
) -> usize {
    let starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, m)| starts_round(m))
        .map(|(i, _)| i)
        .collect();
    // A ceiling below KEEP_ROUNDS wins (the window would drop the rest unsummarised).
    let keep = KEEP_ROUNDS.min(ceiling.max(1));
    if starts.len() <= keep {
        return 0;
    }
    let sizes: Vec<u64> = history.iter().map(message_tokens).collect();
    let total: u64 = fixed + sizes.iter().sum::<u64>();
    if starts.len() <= ceiling && total <= token_budget {
        return 0;
    }
    let rounds_mark = ((ceiling as f64 * FOLD_TO_ROUNDS) as usize).max(keep);
    let tokens_mark = (token_budget as f64 * FOLD_TO_BUDGET) as u64;
    let mut remaining = total;
    let mut folded_to = starts[0];
    for (r, &start) in starts.iter().enumerate() {
        let rounds_left = starts.len() - r;
        if rounds_left <= keep || (rounds_left <= rounds_mark && remaining <= tokens_mark) {
            break;
        }
        let end = starts.get(r + 1).copied().unwrap_or(history.len());
        remaining -= sizes[start..end].iter().sum::<u64>();
        folded_to = end;
    }
    folded_to
}

/// Every message's tool results but the last message's, slimmed (the stored form), so the turn's
/// own bulky outputs stop counting once the model has seen them; returns the tokens saved.
pub(crate) fn slim_turn_outputs(messages: &mut [Message], from: usize) -> u64 {
    let Some(last) = messages.len().checked_sub(1) else {
        return 0;
    };
    let before = messages_tokens(&messages[from.min(last)..last]);
    let mut names = std::collections::HashMap::new();
    for m in messages[..last].iter_mut().skip(from) {
        for block in &mut m.content {
            match block {
                Block::ToolCall { id, name, .. } => {
                    names.insert(id.clone(), name.clone());
                }
                Block::ToolResult { call_id, .. } => {
                    let tool = names.get(call_id).map(String::as_str);
                    *block = slim_block(block, tool);
                }
                _ => {}
            }
        }
    }
    before.saturating_sub(messages_tokens(&messages[from.min(last)..last]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Role;

    fn rounds(n: usize, chars: usize) -> Vec<Message> {
        (0..n)
            .flat_map(|i| {
                [
                    Message::user_text(format!("{i} {}", "字".repeat(chars))),
                    Message {
                        role: Role::Assistant,
                        content: vec![Block::ToolCall {
                            id: format!("c{i}"),
                            name: "t".into(),
                            input: serde_json::json!({}),
                        }],
                    },
                    Message {
                        role: Role::User,
                        content: vec![Block::ToolResult {
                            call_id: format!("c{i}"),
                            content: "ok".into(),
                            is_error: false,
                        }],
                    },
                    Message::assistant_text("done"),
                ]
            })
            .collect()
    }

    #[test]
    fn nothing_folds_within_budget_and_ceiling() {
        assert_eq!(fold_count(&rounds(10, 10), 100, 100_000, 50), 0);
    }

    #[test]
    fn the_ceiling_folds_whole_rounds_down_to_the_mark() {
        let h = rounds(51, 10);
        let n = fold_count(&h, 0, 1_000_000, 50);
        assert_eq!(n % 4, 0, "whole rounds only");
        assert!(starts_round(&h[n]));
        assert_eq!((h.len() - n) / 4, 37, "down to 3/4 of the ceiling");
    }

    #[test]
    fn the_budget_folds_but_keeps_the_last_two_rounds() {
        let h = rounds(20, 1_000);
        let n = fold_count(&h, 0, 5_000, 50);
        let left = messages_tokens(&h[n..]);
        assert!(left <= 3_000, "{left}");
        assert!(n.is_multiple_of(4) && n > 0);
        let n = fold_count(&h, 0, 10, 50);
        assert_eq!(h.len() - n, 8, "the last two rounds stay whole");
        let n = fold_count(&h, 0, 1_000_000, 1);
        assert_eq!(h.len() - n, 4, "a ceiling of one round keeps one");
    }

    #[test]
    fn turn_outputs_are_slimmed_except_the_newest() {
        let mut m = rounds(3, 1);
        for msg in &mut m {
            for b in &mut msg.content {
                if let Block::ToolResult { content, .. } = b {
                    *content = "x".repeat(5_000);
                }
            }
        }
        m.truncate(11); // ends with the third round's results
        let saved = slim_turn_outputs(&mut m, 0);
        assert!(saved > 2_000, "{saved}");
        let Block::ToolResult { content, .. } = &m[2].content[0] else {
            panic!()
        };
        assert!(content.starts_with("t 结果已处理"), "{content}");
        let Block::ToolResult { content, .. } = &m[10].content[0] else {
            panic!()
        };
        assert_eq!(content.len(), 5_000, "the newest results stay whole");
    }
}
