//! The OpenAI-compatible `/chat/completions` request body: the internal conversation converted
//! to chat messages (system first, tool results as `role: "tool"` messages, images as data URLs,
//! assistant tool calls with JSON-string arguments).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::Value;

use crate::conversation::{Block, Message, Role, ToolSpec};
use crate::llm::ModelRequest;

/// The provider tag of reasoning blocks (`reasoning_content`) this provider produces.
pub(crate) const PROVIDER_TAG: &str = "openai_compat";

/// The request body of `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(crate) struct Body<'a> {
    pub model: &'a str,
    pub messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// `minimal`/`low`/`medium`/`high`, when configured for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// `{"include_usage": true}`.
#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    include_usage: bool,
}

/// One chat message.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(crate) enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<String>,
        /// DeepSeek thinking mode: the reasoning of a step that called tools must be sent back.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallOut<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A plain string, or content parts when there are images or several text blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<Part<'a>>),
}

/// A user content part.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Part<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

/// `{"url": "data:<mime>;base64,<data>"}`.
#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl {
    url: String,
}

/// An assistant tool call.
#[derive(Debug, Serialize)]
pub(crate) struct ToolCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
}

/// The called function; `arguments` is a JSON string.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionOut<'a> {
    name: &'a str,
    arguments: String,
}

/// A tool definition.
#[derive(Debug, Serialize)]
pub(crate) struct ToolDef<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDef<'a>,
}

/// `{name, description, parameters}`.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The body for `request`; `stream` selects SSE (with usage in the last chunk).
pub(crate) fn body<'a>(
    request: &ModelRequest<'a>,
    max_tokens: Option<u32>,
    stream: bool,
) -> Body<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(ChatMessage::System {
            content: request.system,
        });
    }
    for message in request.messages {
        match message.role {
            Role::User => user(message, &mut messages),
            Role::Assistant => messages.extend(assistant(message)),
        }
    }
    Body {
        model: request.model,
        messages,
        tools: tools(request.tools),
        max_tokens,
        reasoning_effort: None,
        stream,
        stream_options: stream.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

fn tools(specs: &[ToolSpec]) -> Vec<ToolDef<'_>> {
    specs
        .iter()
        .map(|t| ToolDef {
            kind: "function",
            function: FunctionDef {
                name: &t.name,
                description: &t.description,
                parameters: &t.input_schema,
            },
        })
        .collect()
}

/// Tool results first (as `tool` messages answering the previous assistant message), then the
/// rest of the user content.
fn user<'a>(message: &'a Message, out: &mut Vec<ChatMessage<'a>>) {
    let mut parts = Vec::new();
    for block in &message.content {
        match block {
            Block::ToolResult {
                call_id, content, ..
            } => out.push(ChatMessage::Tool {
                tool_call_id: call_id,
                content,
            }),
            Block::Text { text } if !text.is_empty() => parts.push(Part::Text { text }),
            Block::Image { mime_type, data } => parts.push(Part::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{mime_type};base64,{}", STANDARD.encode(data)),
                },
            }),
            Block::Text { .. } | Block::ToolCall { .. } | Block::Reasoning { .. } => {}
        }
    }
    let content = match parts.as_slice() {
        [] => return,
        [Part::Text { text }] => UserContent::Text(text),
        _ => UserContent::Parts(parts),
    };
    out.push(ChatMessage::User { content });
}

/// Text joined, tool calls with JSON-string arguments; reasoning only alongside tool calls
/// (DeepSeek requires it there and ignores or rejects it elsewhere). `None` when empty.
fn assistant(message: &Message) -> Option<ChatMessage<'_>> {
    let text = message.text();
    let tool_calls: Vec<ToolCallOut<'_>> = message
        .tool_calls()
        .map(|c| ToolCallOut {
            id: c.id,
            kind: "function",
            function: FunctionOut {
                name: c.name,
                arguments: arguments(c.input),
            },
        })
        .collect();
    if text.is_empty() && tool_calls.is_empty() {
        return None;
    }
    let reasoning_content = if tool_calls.is_empty() {
        None
    } else {
        reasoning(message)
    };
    let content = if text.is_empty() { None } else { Some(text) };
    Some(ChatMessage::Assistant {
        content,
        reasoning_content,
        tool_calls,
    })
}

fn arguments(input: &Value) -> String {
    if input.is_null() {
        "{}".to_owned()
    } else {
        input.to_string()
    }
}

fn reasoning(message: &Message) -> Option<&str> {
    message.content.iter().find_map(|b| match b {
        Block::Reasoning { provider, data } if provider == PROVIDER_TAG => data
            .get("reasoning_content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty()),
        _ => None,
    })
}
