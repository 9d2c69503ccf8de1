//! Decoding an OpenAI-compatible chat-completions SSE stream: text and `reasoning_content` /
//! `reasoning` deltas, inline `<think>` blocks taken out of the text (`think`), tool calls assembled from `delta.tool_calls[index]` fragments, `finish_reason`,
//! usage in any chunk, `data: [DONE]` (optional), and error chunks.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde_json::{Value, json};

use super::think::{Piece, ThinkSplitter};
use super::wire::PROVIDER_TAG;
use crate::conversation::{Block, Message, Role, Usage};
use crate::http::error_from_json;
use crate::llm::http::{is_capability_missing, is_context_too_long};
use crate::llm::sse::{Decoder, json_data};
use crate::llm::{LlmError, ModelResponse, StopReason, StreamEvent};

/// A tool call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// The state of one streamed chat completion.
#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    text: String,
    reasoning: String,
    /// Takes inline `<think>` blocks out of the content.
    think: ThinkSplitter,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

fn stream_error(message: impl Into<String>) -> LlmError {
    LlmError::Stream {
        message: message.into(),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, event: &Event, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        if event.event == "error" {
            let value = serde_json::from_str(data).unwrap_or_else(|_| json!({ "error": data }));
            return Err(chunk_error(&value));
        }
        let chunk = json_data(event)?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(chunk_error(&chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = parse_usage(usage);
        }
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for choice in choices
            .iter()
            .filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, out);
            }
            if let Some(reason) = str_at(choice, "finish_reason") {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn finish(&mut self) -> Result<ModelResponse, LlmError> {
        if self.finish_reason.is_none() && !self.done {
            return Err(stream_error(
                "the stream ended without a finish_reason or [DONE] (connection closed early)",
            ));
        }
        let truncated = self.finish_reason.as_deref() == Some("length");
        let mut held = Vec::new();
        self.think.finish(&mut held);
        self.take_pieces(held, &mut Vec::new());
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            let data = json!({ "reasoning_content": std::mem::take(&mut self.reasoning) });
            content.push(Block::Reasoning {
                provider: PROVIDER_TAG.to_owned(),
                data,
            });
        }
        if !self.text.is_empty() {
            content.push(Block::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        for (index, call) in std::mem::take(&mut self.calls) {
            if let Some(block) = finish_call(index, call, truncated)? {
                content.push(block);
            }
        }
        let has_tools = content.iter().any(|b| matches!(b, Block::ToolCall { .. }));
        let stop_reason = match self.finish_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            _ if has_tools => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some("tool_calls" | "function_call") => StopReason::EndTurn,
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

impl OpenAiDecoder {
    fn delta(&mut self, delta: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(text) = str_at(delta, "content").filter(|t| !t.is_empty()) {
            let mut pieces = Vec::new();
            self.think.push(text, &mut pieces);
            self.take_pieces(pieces, out);
        }
        if let Some(reasoning) =
            str_at(delta, "reasoning_content").or_else(|| str_at(delta, "reasoning"))
        {
            self.reasoning.push_str(reasoning);
        }
        let fragments = delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for fragment in fragments {
            self.tool_fragment(fragment, out);
        }
    }

    /// Adds classified content: answer text is shown now, inline reasoning joins the
    /// `reasoning_content`.
    fn take_pieces(&mut self, pieces: Vec<Piece>, out: &mut Vec<StreamEvent>) {
        for piece in pieces {
            match piece {
                Piece::Answer(text) => {
                    self.text.push_str(&text);
                    out.push(StreamEvent::TextDelta(text));
                }
                Piece::Reasoning(text) => self.reasoning.push_str(&text),
            }
        }
    }

    /// Merges one `tool_calls[i]` fragment: id and name usually only in the first, arguments
    /// split anywhere, calls interleaved by `index`.
    fn tool_fragment(&mut self, fragment: &Value, out: &mut Vec<StreamEvent>) {
        let id = str_at(fragment, "id").filter(|s| !s.is_empty());
        let index = match fragment.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            // Servers that omit `index`: a new id starts a new call, otherwise continue the last.
            None => match (id, self.calls.last_key_value()) {
                (Some(id), Some((&last, call))) if call.id != id => last + 1,
                (_, Some((&last, _))) => last,
                (_, None) => 0,
            },
        };
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        if let Some(function) = fragment.get("function") {
            // Some servers repeat the name in every fragment: keep the first announced one.
            if let Some(name) = str_at(function, "name").filter(|_| !call.announced) {
                call.name.push_str(name);
            }
            if let Some(arguments) = str_at(function, "arguments") {
                call.arguments.push_str(arguments);
            }
        }
        if !call.announced && !call.name.is_empty() {
            if call.id.is_empty() {
                call.id = format!("call_{index}");
            }
            call.announced = true;
            out.push(StreamEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }
}

/// The finished tool call; `None` for a call cut off by the length limit.
fn finish_call(index: u64, call: PartialCall, truncated: bool) -> Result<Option<Block>, LlmError> {
    if call.name.is_empty() {
        return if truncated {
            Ok(None)
        } else {
            Err(stream_error(format!(
                "tool call {index} has no function name"
            )))
        };
    }
    let id = if call.id.is_empty() {
        format!("call_{index}")
    } else {
        call.id
    };
    let input = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        match serde_json::from_str::<Value>(&call.arguments) {
            Ok(v) if v.is_object() => v,
            _ if truncated => return Ok(None),
            Ok(_) => {
                return Err(stream_error(format!(
                    "arguments of tool call `{}` are not a JSON object",
                    call.name
                )));
            }
            Err(e) => {
                return Err(stream_error(format!(
                    "arguments of tool call `{}` are malformed JSON: {e}",
                    call.name
                )));
            }
        }
    };
    Ok(Some(Block::ToolCall {
        id,
        name: call.name,
        input,
    }))
}

/// `usage` with cached prompt tokens split out (`prompt_tokens_details.cached_tokens`, or
/// DeepSeek's `prompt_cache_hit_tokens`); `input_tokens` counts uncached tokens only.
pub(crate) fn parse_usage(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(u.get("prompt_tokens"));
    let cached = u
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .and_then(Value::as_u64)
        .or_else(|| u.get("prompt_cache_hit_tokens").and_then(Value::as_u64))
        .unwrap_or(0);
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: n(u.get("completion_tokens")),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

/// An error chunk (`{"error": …}` in any shape) as a typed error.
fn chunk_error(value: &Value) -> LlmError {
    let (kind, message) = error_from_json(value);
    let message = message.unwrap_or_else(|| "unknown error".to_owned());
    let code = value
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_u64);
    let lower = format!("{} {}", kind.as_deref().unwrap_or_default(), message).to_lowercase();
    if is_context_too_long(&message) || lower.contains("context_length_exceeded") {
        LlmError::ContextTooLong { message }
    } else if code == Some(429) || lower.contains("rate limit") || lower.contains("rate_limit") {
        LlmError::RateLimited {
            retry_after: None,
            message,
        }
    } else if lower.contains("overloaded")
        || lower.contains("server_error")
        || code.is_some_and(|c| c >= 500)
    {
        LlmError::Overloaded {
            status: code.and_then(|c| u16::try_from(c).ok()).unwrap_or(503),
            message,
        }
    } else if is_capability_missing(&message) {
        LlmError::CapabilityMissing { message }
    } else {
        stream_error(format!("provider error: {message}"))
    }
}
