//! Transcript repair on load: turns any stored history into one both providers accept.
//!
//! A pure function over `Vec<Message>`, applied every time history is loaded (the repair is not
//! written back: it is cheap, deterministic and idempotent, so the store keeps what happened).
//! After [`repair`]:
//! - the first message is a user message and roles strictly alternate (consecutive messages of
//!   the same role are merged; leading assistant messages are dropped);
//! - no message is empty, no text block is whitespace-only;
//! - every tool call of an assistant message is answered, in call order, by the leading
//!   `ToolResult` blocks of the next (user) message — a synthetic "interrupted" error result is
//!   added where none was stored — and no other `ToolResult` exists (orphans and duplicates are
//!   dropped);
//! - tool call ids are unique in the transcript and well-formed, tool names match
//!   `^[a-zA-Z0-9_-]{1,64}$`, tool inputs are JSON objects;
//! - `Reasoning` blocks survive only in assistant messages and only for the current provider kind.

use std::collections::{HashMap, HashSet};

use kernel_common::config::ProviderKind;

use crate::conversation::{Block, Message, Role};

/// The content of a result added for a tool call that never got one (crash, lost step).
pub(crate) const INTERRUPTED_RESULT: &str =
    r#"{"error":"interrupted: the turn ended before this tool returned"}"#;

/// Longest tool name both providers accept.
const MAX_TOOL_NAME: usize = 64;

/// Repairs `messages` for a request to a provider of kind `provider_kind` (`claude`,
/// `openai_compat`). Idempotent; a transcript that is already valid comes back unchanged.
pub(crate) fn repair(messages: Vec<Message>, provider_kind: ProviderKind) -> Vec<Message> {
    let mut r = Repairer::default();
    for message in messages {
        let content = clean_blocks(message.content, message.role, provider_kind);
        match message.role {
            Role::Assistant => r.push_assistant(content),
            Role::User => r.push_user(content),
        }
    }
    close_tool_calls(&mut r.out);
    r.out
}

/// Whether a block carries nothing a provider would accept.
fn is_blank(block: &Block) -> bool {
    matches!(block, Block::Text { text } if text.trim().is_empty())
}

/// Drops blocks that cannot appear in a message of `role` for this provider kind and normalises
/// tool call names and inputs.
fn clean_blocks(content: Vec<Block>, role: Role, provider_kind: ProviderKind) -> Vec<Block> {
    content
        .into_iter()
        .filter(|b| !is_blank(b))
        .filter_map(|b| match (role, b) {
            (Role::Assistant, Block::Reasoning { provider, data }) => {
                (provider == provider_kind.as_str()).then_some(Block::Reasoning { provider, data })
            }
            (Role::Assistant, Block::ToolCall { id, name, input }) => Some(Block::ToolCall {
                id: sanitize_id(&id),
                name: sanitize_name(&name),
                input: if input.is_object() {
                    input
                } else {
                    serde_json::json!({})
                },
            }),
            (Role::Assistant, b @ Block::Text { .. }) => Some(b),
            (Role::Assistant, Block::Image { .. } | Block::ToolResult { .. }) => None,
            (
                Role::User,
                Block::ToolResult {
                    call_id,
                    content,
                    is_error,
                },
            ) => Some(Block::ToolResult {
                call_id: sanitize_id(&call_id),
                content,
                is_error,
            }),
            (Role::User, b @ (Block::Text { .. } | Block::Image { .. })) => Some(b),
            (Role::User, Block::ToolCall { .. } | Block::Reasoning { .. }) => None,
        })
        .collect()
}

/// A tool call id both providers accept: `[a-zA-Z0-9_-]+` (others replaced by `_`).
fn sanitize_id(id: &str) -> String {
    if id.is_empty() {
        return "call".to_owned();
    }
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A tool name matching `^[a-zA-Z0-9_-]{1,64}$`.
fn sanitize_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME)
        .collect();
    if clean.is_empty() {
        "unknown_tool".to_owned()
    } else {
        clean
    }
}

/// The single forward pass: merges same-role neighbours, keeps only answerable tool results.
#[derive(Default)]
struct Repairer {
    out: Vec<Message>,
    /// Every tool call id already used in `out`.
    seen_ids: HashSet<String>,
    /// The calls of the latest assistant message: id as stored → id in `out`.
    pending: HashMap<String, String>,
    /// Ids of `pending` already answered by the user message(s) after it.
    answered: HashSet<String>,
}

impl Repairer {
    fn push_assistant(&mut self, content: Vec<Block>) {
        if self.out.is_empty() {
            return; // the first message must be the user's
        }
        let merging = self.out.last().is_some_and(|m| m.role == Role::Assistant);
        if !merging
            && !content
                .iter()
                .any(|b| matches!(b, Block::Text { .. } | Block::ToolCall { .. }))
        {
            return; // nothing to say (reasoning alone is not a message)
        }
        if !merging {
            self.pending.clear();
            self.answered.clear();
        }
        let mut kept = Vec::with_capacity(content.len());
        for block in content {
            match block {
                Block::ToolCall { id, name, input } => {
                    if self.pending.contains_key(&id) {
                        continue; // a duplicate within one message cannot be answered apart
                    }
                    let unique = self.unique_id(&id);
                    self.pending.insert(id, unique.clone());
                    kept.push(Block::ToolCall {
                        id: unique,
                        name,
                        input,
                    });
                }
                other => kept.push(other),
            }
        }
        if merging {
            if let Some(last) = self.out.last_mut() {
                last.content.extend(kept);
            }
        } else {
            self.out.push(Message {
                role: Role::Assistant,
                content: kept,
            });
        }
    }

    /// `id` if unused in the transcript, else `id_2`, `id_3`, …; recorded as used.
    fn unique_id(&mut self, id: &str) -> String {
        let mut candidate = id.to_owned();
        let mut n = 1;
        while self.seen_ids.contains(&candidate) {
            n += 1;
            candidate = format!("{id}_{n}");
        }
        self.seen_ids.insert(candidate.clone());
        candidate
    }

    fn push_user(&mut self, content: Vec<Block>) {
        let (results, others): (Vec<Block>, Vec<Block>) = content
            .into_iter()
            .partition(|b| matches!(b, Block::ToolResult { .. }));
        let results: Vec<Block> = results
            .into_iter()
            .filter_map(|b| self.result_for(b))
            .collect();
        if results.is_empty() && others.is_empty() {
            return;
        }
        match self.out.last_mut() {
            Some(last) if last.role == Role::User => {
                let at = last
                    .content
                    .iter()
                    .take_while(|b| matches!(b, Block::ToolResult { .. }))
                    .count();
                last.content.splice(at..at, results);
                last.content.extend(others);
            }
            _ => {
                let mut content = results;
                content.extend(others);
                self.out.push(Message {
                    role: Role::User,
                    content,
                });
            }
        }
    }

    /// The result re-addressed to its call in `out`, or `None` for an orphan or a duplicate.
    fn result_for(&mut self, block: Block) -> Option<Block> {
        let Block::ToolResult {
            call_id,
            content,
            is_error,
        } = block
        else {
            return None;
        };
        let target = self.pending.get(&call_id)?.clone();
        self.answered
            .insert(target.clone())
            .then_some(Block::ToolResult {
                call_id: target,
                content,
                is_error,
            })
    }
}

/// Makes the message after every assistant message with tool calls start with exactly one result
/// per call, in call order, adding synthetic "interrupted" results where none exist.
fn close_tool_calls(out: &mut Vec<Message>) {
    let mut i = 0;
    while i < out.len() {
        let calls: Vec<String> = out[i].tool_calls().map(|c| c.id.to_owned()).collect();
        if out[i].role != Role::Assistant || calls.is_empty() {
            i += 1;
            continue;
        }
        if out.get(i + 1).is_none_or(|m| m.role != Role::User) {
            out.insert(
                i + 1,
                Message {
                    role: Role::User,
                    content: Vec::new(),
                },
            );
        }
        let next = &mut out[i + 1];
        let (mut results, others): (Vec<Block>, Vec<Block>) = std::mem::take(&mut next.content)
            .into_iter()
            .partition(|b| matches!(b, Block::ToolResult { .. }));
        let mut ordered = Vec::with_capacity(calls.len() + others.len());
        for id in calls {
            let found = results
                .iter()
                .position(|b| matches!(b, Block::ToolResult { call_id, .. } if *call_id == id));
            ordered.push(match found {
                Some(at) => results.swap_remove(at),
                None => Block::ToolResult {
                    call_id: id,
                    content: INTERRUPTED_RESULT.to_owned(),
                    is_error: true,
                },
            });
        }
        ordered.extend(others);
        next.content = ordered;
        i += 2;
    }
}

#[cfg(test)]
mod tests;
