//! The new messages as the extraction call reads them: the text of user and assistant messages
//! (tool calls and results, reasoning and placeholders of processed media left out), redacted,
//! each cut to a length and the whole to a budget (the newest kept). The per-turn material
//! (current time, recalled memories) is never stored; anything that looks like it is stripped
//! anyway, so a recalled memory is never read back as something new.

use kernel_common::Redactor;
use kernel_common::text::truncate;

use crate::conversation::{Block, Role};
use crate::store::StoredMessage;
use crate::turn::RECALL_HEADING;

/// Most characters of one message.
const MAX_MESSAGE_CHARS: usize = 2000;
/// Most characters of the whole transcript.
const MAX_TRANSCRIPT_CHARS: usize = 24_000;
/// How the per-turn time line begins.
const TIME_PREFIX: &str = "[当前时间:";

/// The transcript of `messages` (oldest first), or `None` when there is no text in them.
pub(super) fn transcript(messages: &[StoredMessage], redactor: &Redactor) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for stored in messages {
        let m = &stored.message;
        let text: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let text = strip_per_turn(&text.join("\n"));
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let who = match m.role {
            Role::User => "主人",
            Role::Assistant => "助手",
        };
        let text = redactor.redact(&truncate(text, MAX_MESSAGE_CHARS));
        lines.push(format!("{who}: {text}"));
    }
    let mut total = 0;
    let mut kept = Vec::new();
    for line in lines.into_iter().rev() {
        total += line.chars().count() + 1;
        if total > MAX_TRANSCRIPT_CHARS && !kept.is_empty() {
            break;
        }
        kept.push(line);
    }
    kept.reverse();
    (!kept.is_empty()).then(|| kept.join("\n"))
}

/// `text` without a per-turn time line or recalled-memory section.
pub(super) fn strip_per_turn(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_recall = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with(TIME_PREFIX) {
            continue;
        }
        if trimmed.starts_with(RECALL_HEADING) {
            in_recall = true;
            continue;
        }
        if in_recall {
            if trimmed.starts_with("- ") {
                continue;
            }
            in_recall = false;
        }
        out.push(line);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::conversation::Message;

    fn stored(id: i64, message: Message) -> StoredMessage {
        StoredMessage {
            id,
            ordinal: id,
            message,
            created_at: Utc::now(),
        }
    }

    #[test]
    fn keeps_the_conversation_and_drops_per_turn_material_and_secrets() {
        let redactor = Redactor::new(["sk-secret-0123456789abcdef"]);
        let recalled = format!(
            "[当前时间: 2026-02-11T21:42:00+0800 (Asia/Shanghai)]\n{RECALL_HEADING}\n- [3] 主人养了一只猫\n我的 key 是 sk-secret-0123456789abcdef"
        );
        let messages = [
            stored(1, Message::user_text(recalled)),
            stored(2, Message::assistant_text("好的，已记下。")),
            stored(
                3,
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        call_id: "c".into(),
                        content: "tool output".into(),
                        is_error: false,
                    }],
                },
            ),
        ];
        let t = transcript(&messages, &redactor).unwrap();
        assert!(t.starts_with("主人: 我的 key 是"), "{t}");
        assert!(t.contains("助手: 好的，已记下。"), "{t}");
        for gone in [
            "主人养了一只猫",
            "当前时间",
            RECALL_HEADING,
            "tool output",
            "sk-secret-0123456789abcdef",
        ] {
            assert!(!t.contains(gone), "{gone} in {t}");
        }
        assert_eq!(transcript(&messages[2..], &redactor), None);
    }
}
