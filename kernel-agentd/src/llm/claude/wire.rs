//! The Anthropic Messages request body: the internal conversation converted to the wire format,
//! with `cache_control` breakpoints on the last system block, the last tool and the last block of
//! the caller's stable prefix.
//!
//! Serialization is deterministic (typed structs, fixed field order), so an unchanged prefix of
//! the conversation serializes to the same bytes in every request.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::Value;

use crate::conversation::{Block, Message, Role, ToolSpec};
use crate::llm::ModelRequest;

/// The provider tag of reasoning blocks this provider produces and accepts back.
pub(crate) const PROVIDER_TAG: &str = "claude";

static EMPTY_OBJECT: LazyLock<Value> = LazyLock::new(|| Value::Object(Default::default()));

/// `{"type":"ephemeral"}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Option<CacheControl> = Some(CacheControl { kind: "ephemeral" });

/// The request body of `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct Body<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<SystemBlock<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    pub messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Extended thinking, when configured for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
}

/// `{"type":"enabled","budget_tokens":n}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

impl Thinking {
    /// Extended thinking with `budget_tokens`.
    pub(crate) fn enabled(budget_tokens: u32) -> Self {
        Self {
            kind: "enabled",
            budget_tokens,
        }
    }
}

impl Body<'_> {
    /// Whether thinking may be on for these messages: Anthropic requires that when the last
    /// user message carries tool results, the assistant message before it starts with its
    /// thinking — which history from before thinking was on, or from another provider, lacks.
    pub(crate) fn allows_thinking(&self) -> bool {
        let Some(last) = self.messages.last() else {
            return true;
        };
        if !last.content.iter().any(WireBlock::is_tool_result) {
            return true;
        }
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == "assistant")
            .is_none_or(|m| matches!(m.content.first(), Some(WireBlock::Raw(_))))
    }
}

/// A system prompt text block.
#[derive(Debug, Serialize)]
pub(crate) struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// A tool definition.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// One message of `messages`.
#[derive(Debug, Serialize)]
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

/// A content block: typed, or a stored thinking block sent back verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum WireBlock<'a> {
    Typed(Content<'a>),
    Raw(&'a Value),
}

/// The typed content blocks Kernel sends.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Content<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "str::is_empty")]
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// `{"type":"base64","media_type":…,"data":…}`.
#[derive(Debug, Serialize)]
pub(crate) struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: String,
}

impl WireBlock<'_> {
    /// Puts a breakpoint on this block; `false` for blocks that cannot carry one (thinking).
    fn set_cache(&mut self) -> bool {
        let slot = match self {
            WireBlock::Raw(_) => return false,
            WireBlock::Typed(Content::Text { cache_control, .. })
            | WireBlock::Typed(Content::Image { cache_control, .. })
            | WireBlock::Typed(Content::ToolUse { cache_control, .. })
            | WireBlock::Typed(Content::ToolResult { cache_control, .. }) => cache_control,
        };
        *slot = EPHEMERAL;
        true
    }

    fn is_tool_result(&self) -> bool {
        matches!(self, WireBlock::Typed(Content::ToolResult { .. }))
    }
}

/// The body for `request`; `stream` selects SSE.
pub(crate) fn body<'a>(request: &ModelRequest<'a>, max_tokens: u32, stream: bool) -> Body<'a> {
    Body {
        model: request.model,
        max_tokens,
        system: system(request.system),
        tools: tools(request.tools),
        messages: messages(request.messages, request.stable_prefix),
        stream,
        thinking: None,
    }
}

fn system(text: &str) -> Vec<SystemBlock<'_>> {
    if text.is_empty() {
        return Vec::new();
    }
    vec![SystemBlock {
        kind: "text",
        text,
        cache_control: EPHEMERAL,
    }]
}

fn tools(specs: &[ToolSpec]) -> Vec<Tool<'_>> {
    let mut tools: Vec<Tool<'_>> = specs
        .iter()
        .map(|t| Tool {
            name: &t.name,
            description: &t.description,
            input_schema: &t.input_schema,
            cache_control: None,
        })
        .collect();
    if let Some(last) = tools.last_mut() {
        last.cache_control = EPHEMERAL;
    }
    tools
}

/// Converts, marks the stable-prefix breakpoint, then merges consecutive messages of one role
/// (Anthropic requires alternation) with tool results first in each user message.
fn messages(source: &[Message], stable_prefix: usize) -> Vec<WireMessage<'_>> {
    let mut converted: Vec<(Role, Vec<WireBlock<'_>>)> = Vec::with_capacity(source.len());
    let mut prefix_len = 0;
    for (i, message) in source.iter().enumerate() {
        let blocks: Vec<WireBlock<'_>> = message.content.iter().filter_map(block).collect();
        if blocks.is_empty() {
            continue;
        }
        converted.push((message.role, blocks));
        if i < stable_prefix {
            prefix_len = converted.len();
        }
    }
    mark_breakpoint(&mut converted[..prefix_len]);
    let mut out: Vec<WireMessage<'_>> = Vec::with_capacity(converted.len());
    for (role, blocks) in converted {
        let role = role_name(role);
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    for message in out.iter_mut().filter(|m| m.role == "user") {
        // A stable partition: tool_result blocks must come first in a user message.
        let (mut results, rest): (Vec<_>, Vec<_>) = message
            .content
            .drain(..)
            .partition(WireBlock::is_tool_result);
        results.extend(rest);
        message.content = results;
    }
    out
}

/// Marks the last block that can carry `cache_control`, searching backwards.
fn mark_breakpoint(prefix: &mut [(Role, Vec<WireBlock<'_>>)]) {
    for (_, blocks) in prefix.iter_mut().rev() {
        for block in blocks.iter_mut().rev() {
            if block.set_cache() {
                return;
            }
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// One internal block on the wire; `None` for what Anthropic must not see (empty text, other
/// providers' reasoning).
fn block(b: &Block) -> Option<WireBlock<'_>> {
    let content = match b {
        Block::Text { text } if text.is_empty() => return None,
        Block::Text { text } => Content::Text {
            text,
            cache_control: None,
        },
        Block::Image { mime_type, data } => Content::Image {
            source: ImageSource {
                kind: "base64",
                media_type: mime_type,
                data: STANDARD.encode(data),
            },
            cache_control: None,
        },
        Block::ToolCall { id, name, input } => {
            let input = if input.is_object() {
                input
            } else {
                &*EMPTY_OBJECT
            };
            Content::ToolUse {
                id,
                name,
                input,
                cache_control: None,
            }
        }
        Block::ToolResult {
            call_id,
            content,
            is_error,
        } => Content::ToolResult {
            tool_use_id: call_id,
            content,
            is_error: *is_error,
            cache_control: None,
        },
        Block::Reasoning { provider, data } if provider == PROVIDER_TAG && data.is_object() => {
            return Some(WireBlock::Raw(data));
        }
        Block::Reasoning { .. } => return None,
    };
    Some(WireBlock::Typed(content))
}
