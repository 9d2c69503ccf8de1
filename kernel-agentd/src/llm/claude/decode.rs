//! Decoding Anthropic's SSE stream (`message_start`, `content_block_*`, `message_delta`,
//! `message_stop`, `ping`, `error`) into stream events and the final assistant message.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde_json::{Value, json};

use super::wire::PROVIDER_TAG;
use crate::conversation::{Block, Message, Role, Usage};
use crate::http::error_from_json;
use crate::llm::sse::{Decoder, json_data};
use crate::llm::{LlmError, ModelResponse, StopReason, StreamEvent};

/// A content block being streamed.
#[derive(Debug)]
enum Partial {
    Text(String),
    Tool {
        id: String,
        name: String,
        initial: Value,
        json: String,
        done: bool,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(Value),
    /// A block type Kernel does not know; ignored.
    Other,
}

/// The state of one streamed Messages response.
#[derive(Debug, Default)]
pub(crate) struct ClaudeDecoder {
    blocks: BTreeMap<u64, Partial>,
    usage: Usage,
    stop_reason: Option<String>,
    started: bool,
    stopped: bool,
}

fn stream_error(message: impl Into<String>) -> LlmError {
    LlmError::Stream {
        message: message.into(),
    }
}

fn u64_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl Decoder for ClaudeDecoder {
    fn event(&mut self, event: &Event, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let data = json_data(event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(usage) = data.get("message").and_then(|m| m.get("usage")) {
                    self.apply_usage(usage);
                }
            }
            "content_block_start" => self.block_start(&data, out)?,
            "content_block_delta" => self.block_delta(&data, out)?,
            "content_block_stop" => self.block_stop(&data)?,
            "message_delta" => {
                if let Some(reason) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = data.get("usage") {
                    self.apply_usage(usage);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => return Err(event_error(&data)),
            // `ping` and event types added later are ignored, as Anthropic's docs ask.
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<ModelResponse, LlmError> {
        if !self.stopped {
            return Err(stream_error(if self.started {
                "the stream ended before message_stop (connection closed early)"
            } else {
                "the stream ended before message_start"
            }));
        }
        let mut content = Vec::new();
        for (_, partial) in std::mem::take(&mut self.blocks) {
            if let Some(block) = finish_block(partial)? {
                content.push(block);
            }
        }
        let has_tools = content.iter().any(|b| matches!(b, Block::ToolCall { .. }));
        let stop_reason = match self.stop_reason.as_deref() {
            Some("tool_use") => StopReason::ToolUse,
            _ if has_tools => StopReason::ToolUse,
            Some("end_turn" | "stop_sequence") | None => StopReason::EndTurn,
            Some("max_tokens") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        let message = Message {
            role: Role::Assistant,
            content,
        };
        Ok(ModelResponse {
            message,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl ClaudeDecoder {
    /// Usage fields present in `u` replace the current ones (Anthropic reports cumulative counts).
    fn apply_usage(&mut self, u: &Value) {
        if let Some(n) = u64_at(u, "input_tokens") {
            self.usage.input_tokens = n;
        }
        if let Some(n) = u64_at(u, "output_tokens") {
            self.usage.output_tokens = n;
        }
        if let Some(n) = u64_at(u, "cache_creation_input_tokens") {
            self.usage.cache_write_tokens = n;
        }
        if let Some(n) = u64_at(u, "cache_read_input_tokens") {
            self.usage.cache_read_tokens = n;
        }
    }

    fn index(data: &Value) -> Result<u64, LlmError> {
        u64_at(data, "index").ok_or_else(|| stream_error("content block event without an index"))
    }

    fn block_start(&mut self, data: &Value, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let index = Self::index(data)?;
        let block = data
            .get("content_block")
            .ok_or_else(|| stream_error("content_block_start without a block"))?;
        let partial = match str_at(block, "type") {
            "text" => {
                let text = str_at(block, "text").to_owned();
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text.clone()));
                }
                Partial::Text(text)
            }
            "tool_use" => {
                let (id, name) = (
                    str_at(block, "id").to_owned(),
                    str_at(block, "name").to_owned(),
                );
                if id.is_empty() || name.is_empty() {
                    return Err(stream_error("tool_use block without an id or a name"));
                }
                out.push(StreamEvent::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                let initial = block.get("input").cloned().unwrap_or(Value::Null);
                Partial::Tool {
                    id,
                    name,
                    initial,
                    json: String::new(),
                    done: false,
                }
            }
            "thinking" => Partial::Thinking {
                thinking: str_at(block, "thinking").to_owned(),
                signature: str_at(block, "signature").to_owned(),
            },
            "redacted_thinking" => Partial::Redacted(block.clone()),
            _ => Partial::Other,
        };
        self.blocks.insert(index, partial);
        Ok(())
    }

    fn block_delta(&mut self, data: &Value, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let index = Self::index(data)?;
        let delta = data
            .get("delta")
            .ok_or_else(|| stream_error("content_block_delta without a delta"))?;
        let partial = self.blocks.get_mut(&index).ok_or_else(|| {
            stream_error(format!(
                "delta for content block {index}, which was never started"
            ))
        })?;
        match (str_at(delta, "type"), partial) {
            ("text_delta", Partial::Text(text)) => {
                let piece = str_at(delta, "text");
                if !piece.is_empty() {
                    text.push_str(piece);
                    out.push(StreamEvent::TextDelta(piece.to_owned()));
                }
            }
            ("input_json_delta", Partial::Tool { json, .. }) => {
                json.push_str(str_at(delta, "partial_json"))
            }
            ("thinking_delta", Partial::Thinking { thinking, .. }) => {
                thinking.push_str(str_at(delta, "thinking"))
            }
            ("signature_delta", Partial::Thinking { signature, .. }) => {
                signature.push_str(str_at(delta, "signature"))
            }
            (
                kind @ ("text_delta" | "input_json_delta" | "thinking_delta" | "signature_delta"),
                _,
            ) => {
                return Err(stream_error(format!(
                    "`{kind}` for content block {index} of another type"
                )));
            }
            // citations_delta and future delta types carry nothing Kernel keeps.
            _ => {}
        }
        Ok(())
    }

    fn block_stop(&mut self, data: &Value) -> Result<(), LlmError> {
        let index = Self::index(data)?;
        if let Some(Partial::Tool { done, .. }) = self.blocks.get_mut(&index) {
            *done = true;
        }
        Ok(())
    }
}

/// The finished block, or `None` for blocks not kept (empty text, unknown types, a tool call cut
/// off by `max_tokens` before its input was complete).
fn finish_block(partial: Partial) -> Result<Option<Block>, LlmError> {
    Ok(match partial {
        Partial::Text(text) if text.is_empty() => None,
        Partial::Text(text) => Some(Block::Text { text }),
        Partial::Tool {
            id,
            name,
            initial,
            json,
            done,
        } => {
            let input = if json.trim().is_empty() {
                if initial.is_object() {
                    initial
                } else {
                    json!({})
                }
            } else {
                match serde_json::from_str::<Value>(&json) {
                    Ok(v) if v.is_object() => v,
                    Ok(_) | Err(_) if !done => return Ok(None),
                    Ok(_) => {
                        return Err(stream_error(format!(
                            "tool_use input for `{name}` is not a JSON object"
                        )));
                    }
                    Err(e) => {
                        return Err(stream_error(format!(
                            "tool_use input for `{name}` is malformed JSON: {e}"
                        )));
                    }
                }
            };
            Some(Block::ToolCall { id, name, input })
        }
        Partial::Thinking {
            thinking,
            signature,
        } => Some(Block::Reasoning {
            provider: PROVIDER_TAG.to_owned(),
            data: json!({"type": "thinking", "thinking": thinking, "signature": signature}),
        }),
        Partial::Redacted(block) => Some(Block::Reasoning {
            provider: PROVIDER_TAG.to_owned(),
            data: block,
        }),
        Partial::Other => None,
    })
}

/// A mid-stream `error` event: `overloaded_error` is retryable, the rest end the stream.
fn event_error(data: &Value) -> LlmError {
    let (kind, message) = error_from_json(data);
    let message = message.unwrap_or_else(|| "unknown error".to_owned());
    match kind.as_deref() {
        Some("overloaded_error") => LlmError::Overloaded {
            status: 529,
            message,
        },
        Some(kind) => stream_error(format!("{kind}: {message}")),
        None => stream_error(message),
    }
}
