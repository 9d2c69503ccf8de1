//! The new messages as the extraction call reads them: the text of user and assistant messages
//! and tools' results, each result labelled as outside content from its tool, and so the parts
//! of the owner's messages that did not come from the owner (`outside`: a document, a forwarded
//! message, a background job's result) (tool calls, reasoning and placeholders of processed
//! media left out), redacted, each cut to a length and the whole to a budget (the newest kept).
//! Beside the text, [`Transcript`] keeps what the owner said and what each outside source held,
//! so `origin` can tell where an extracted fact came from. The per-turn material
//! (current time, recalled memories) is never stored; anything that looks like it is stripped
//! anyway, so a recalled memory is never read back as something new.

use std::collections::HashMap;

use kernel_common::Redactor;
use kernel_common::text::truncate;

use crate::conversation::{Block, Message, Role};
use crate::store::StoredMessage;
use crate::turn::RECALL_HEADING;

/// Most characters of one message.
const MAX_MESSAGE_CHARS: usize = 2000;
/// Most characters of the whole transcript.
const MAX_TRANSCRIPT_CHARS: usize = 24_000;
/// How a tool's result is introduced (then the tool's name, then [`TOOL_SUFFIX`]).
pub(super) const TOOL_PREFIX: &str = "工具 ";
/// After the tool's name: the result is outside content, not the owner's word.
pub(super) const TOOL_SUFFIX: &str = " 的结果（外部内容，不是主人说的）: ";
/// How other outside content in the owner's message is introduced (then its label, then
/// [`OUTSIDE_SUFFIX`]).
pub(super) const OUTSIDE_PREFIX: &str = "外部内容（";
/// After the label.
pub(super) const OUTSIDE_SUFFIX: &str = "，不是主人说的）: ";
/// How the per-turn time line begins.
const TIME_PREFIX: &str = "[当前时间:";

/// What the extraction reads, and where its parts came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Transcript {
    /// The text sent to the model.
    pub text: String,
    /// Everything the owner said (lower-case).
    pub owner: String,
    /// `(origin label, what it held, lower-case)`, one entry per source: `tool <name>` for a
    /// tool's results, else `outside`'s labels.
    pub outside: Vec<(String, String)>,
}

/// The transcript of `messages` (oldest first), or `None` when there is no text in them.
pub(super) fn transcript(messages: &[StoredMessage], redactor: &Redactor) -> Option<Transcript> {
    let mut reader = Reader {
        redactor,
        lines: Vec::new(),
        owner: String::new(),
        outside: Vec::new(),
        documents: Vec::new(),
        tools: HashMap::new(),
    };
    for stored in messages {
        reader.message(&stored.message);
    }
    reader.finish()
}

/// Reads the messages oldest first into the transcript's lines, keeping what the owner said and
/// what each outside source held.
struct Reader<'a> {
    redactor: &'a Redactor,
    lines: Vec<String>,
    /// Everything the owner said (lower-case).
    owner: String,
    outside: Vec<(String, String)>,
    /// Documents the last user message carried, already slimmed: the answer after it read them.
    documents: Vec<String>,
    /// Each tool call's tool, by call id.
    tools: HashMap<&'a str, &'a str>,
}

impl<'a> Reader<'a> {
    /// `text` trimmed, cut to [`MAX_MESSAGE_CHARS`] and redacted.
    fn clip(&self, text: &str) -> String {
        self.redactor
            .redact(&truncate(text.trim(), MAX_MESSAGE_CHARS))
    }

    /// Reads message `m`: its tools' results, then its text as the owner's or the assistant's
    /// line.
    fn message(&mut self, m: &'a Message) {
        self.tool_results(m);
        let blocks: Vec<String> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(strip_per_turn(text)),
                _ => None,
            })
            .collect();
        let (who, said) = match m.role {
            Role::User => ("主人", self.owner_words(&blocks)),
            Role::Assistant => ("助手", self.assistant_words(&blocks)),
        };
        let text = said.trim();
        if text.is_empty() {
            return;
        }
        let text = self.clip(text);
        if m.role == Role::User {
            self.owner.push_str(&text.to_lowercase());
            self.owner.push('\n');
        }
        self.lines.push(format!("{who}: {text}"));
    }

    /// The results of `m`'s tool calls (a failed one left out), each a line labelled as outside
    /// content from its tool.
    fn tool_results(&mut self, m: &'a Message) {
        for block in &m.content {
            match block {
                Block::ToolCall { id, name, .. } => {
                    self.tools.insert(id.as_str(), name.as_str());
                }
                Block::ToolResult {
                    call_id,
                    content,
                    is_error: false,
                } => {
                    let Some(name) = self.tools.get(call_id.as_str()).copied() else {
                        continue;
                    };
                    let text = self.clip(content);
                    if text.is_empty() {
                        continue;
                    }
                    self.lines
                        .push(format!("{TOOL_PREFIX}{name}{TOOL_SUFFIX}{text}"));
                    add_outside(&mut self.outside, super::outside::tool_label(name), &text);
                }
                _ => {}
            }
        }
    }

    /// What the owner's own words in a user message's text `blocks` are; the parts from outside
    /// become lines of their own, and its slimmed documents wait for the answer that read them.
    fn owner_words(&mut self, blocks: &[String]) -> String {
        let mut own = Vec::new();
        self.documents.clear();
        for block in blocks {
            if let Some(label) = super::outside::slimmed_document(block) {
                self.documents.push(label);
                continue;
            }
            for (label, part) in super::outside::split(block) {
                let Some(label) = label else {
                    own.push(part);
                    continue;
                };
                let text = self.clip(&part);
                if !text.is_empty() {
                    self.lines
                        .push(format!("{OUTSIDE_PREFIX}{label}{OUTSIDE_SUFFIX}{text}"));
                    add_outside(&mut self.outside, label, &text);
                }
            }
        }
        own.join("\n")
    }

    /// An assistant message's text `blocks`, which is also what the documents before it held.
    fn assistant_words(&mut self, blocks: &[String]) -> String {
        let text = blocks.join("\n");
        let said = self.clip(&text);
        for label in self.documents.drain(..) {
            add_outside(&mut self.outside, label, &said);
        }
        text
    }

    /// The newest lines within [`MAX_TRANSCRIPT_CHARS`] (at least one), or `None` without any.
    fn finish(self) -> Option<Transcript> {
        let mut total = 0;
        let mut kept = Vec::new();
        for line in self.lines.into_iter().rev() {
            total += line.chars().count() + 1;
            if total > MAX_TRANSCRIPT_CHARS && !kept.is_empty() {
                break;
            }
            kept.push(line);
        }
        kept.reverse();
        (!kept.is_empty()).then(|| Transcript {
            text: kept.join("\n"),
            owner: self.owner,
            outside: self.outside,
        })
    }
}

/// Adds `text` to what `label` held.
fn add_outside(outside: &mut Vec<(String, String)>, label: String, text: &str) {
    match outside.iter_mut().find(|(l, _)| *l == label) {
        Some((_, all)) => all.push_str(&text.to_lowercase()),
        None => outside.push((label, text.to_lowercase())),
    }
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
        let t = transcript(&messages, &redactor).unwrap().text;
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

    #[test]
    fn tool_results_are_labelled_with_their_tool_and_kept_apart() {
        let redactor = Redactor::new(Vec::<String>::new());
        let messages = [
            stored(1, Message::user_text("查一下项目资料")),
            stored(
                2,
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolCall {
                        id: "c1".into(),
                        name: "mcp_docs__search".into(),
                        input: serde_json::json!({}),
                    }],
                },
            ),
            stored(
                3,
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        call_id: "c1".into(),
                        content: "项目代号是蓝鲸".into(),
                        is_error: false,
                    }],
                },
            ),
            stored(4, Message::assistant_text("项目代号是蓝鲸。")),
        ];
        let t = transcript(&messages, &redactor).unwrap();
        assert!(
            t.text
                .contains("工具 mcp_docs__search 的结果（外部内容，不是主人说的）: 项目代号是蓝鲸"),
            "{}",
            t.text
        );
        assert_eq!(
            t.outside,
            [(
                "tool mcp_docs__search".to_owned(),
                "项目代号是蓝鲸".to_owned()
            )]
        );
        assert!(t.owner.contains("查一下项目资料") && !t.owner.contains("蓝鲸"));
    }

    #[test]
    fn documents_forwards_and_job_results_in_the_owners_message_are_outside_content() {
        let redactor = Redactor::new(Vec::<String>::new());
        let message = Message {
            role: Role::User,
            content: vec![
                Block::Text {
                    text: "[文件: plan.md]\n```md\n预算三百万\n```".into(),
                },
                Block::Text {
                    text: "[转发自 Alice，2026-11-27 21:04]\n项目代号是蓝鲸\n\n帮我记一下".into(),
                },
            ],
        };
        let job = Message::user_text(
            "[后台任务 #7 已结束：完成，退出码 0] 任务：查\n输出：\n服务器在东京",
        );
        let t = transcript(&[stored(1, message), stored(2, job)], &redactor).unwrap();
        let labels: Vec<&str> = t.outside.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "document plan.md",
                "forwarded from Alice",
                "background job #7"
            ]
        );
        assert!(
            t.text
                .contains("外部内容（forwarded from Alice，不是主人说的）: [转发自 Alice"),
            "{}",
            t.text
        );
        assert!(t.text.contains("主人: 帮我记一下"), "{}", t.text);
        for never in ["蓝鲸", "三百万", "东京", "budget.md"] {
            assert!(!t.owner.contains(never), "{never} in {}", t.owner);
        }
    }
}
