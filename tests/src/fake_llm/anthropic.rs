//! The fake's Anthropic Messages side: scripts rendered as `POST /v1/messages` responses —
//! SSE events exactly as Anthropic documents them (`message_start`, `content_block_start`,
//! `ping`, `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`,
//! `error`), non-streaming messages, and errors in `{"type":"error","error":{…}}` form.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::Call;
use super::body::{self, Frame, event};
use super::script::{ErrorKind, HttpError, Reply, Script, split_chunks, split_pieces};

/// The response to one `/v1/messages` call.
pub(crate) fn render(script: Script, call: &Call) -> Response {
    match script {
        Script::Reply(reply) if call.stream => {
            body::sse(reply_frames(&reply, call), call.shutdown.clone())
        }
        Script::Reply(reply) => match &reply.hold {
            Some(release) => body::held_json(
                release.clone(),
                &message_json(&reply, call),
                call.shutdown.clone(),
            ),
            None => body::json(StatusCode::OK, &message_json(&reply, call), &[]),
        },
        Script::Error(error) => error_response(&error, call),
        Script::MidStreamError { error, .. } if !call.stream => error_response(&error, call),
        Script::MidStreamError { text, error } => {
            let mut frames = partial_text_frames(&text, call);
            let (_, kind, message) = error_parts(&error, call);
            frames.push(event(
                "error",
                &json!({"type": "error", "error": {"type": kind, "message": message}}),
            ));
            body::sse(frames, call.shutdown.clone())
        }
        Script::Stall { ping } => {
            let mut frames = Vec::new();
            if ping && call.stream {
                frames.push(message_start(call, &Reply::default()));
                frames.push(event("ping", &json!({"type": "ping"})));
            }
            frames.push(Frame::Stall);
            body::sse(frames, call.shutdown.clone())
        }
        Script::AbruptClose { text } => {
            let mut frames = partial_text_frames(&text, call);
            frames.push(Frame::Abort);
            body::sse(frames, call.shutdown.clone())
        }
        Script::Truncated { text } => {
            body::sse(partial_text_frames(&text, call), call.shutdown.clone())
        }
        Script::Raw {
            status,
            content_type,
            body,
            headers,
        } => super::raw(status, &content_type, body, &headers),
    }
}

fn message_start(call: &Call, reply: &Reply) -> Frame {
    let usage = json!({
        "input_tokens": reply.usage.input,
        "cache_creation_input_tokens": reply.usage.cache_write,
        "cache_read_input_tokens": reply.usage.cache_read,
        "output_tokens": 1,
    });
    event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_fake_{}", call.seq), "type": "message", "role": "assistant", "content": [],
            "model": call.model, "stop_reason": null, "stop_sequence": null, "usage": usage,
        }}),
    )
}

fn block_start(index: usize, block: Value) -> Frame {
    event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn block_delta(index: usize, delta: Value) -> Frame {
    event(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: usize) -> Frame {
    event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}

/// message_start and a text block with `text` in deltas, unfinished.
fn partial_text_frames(text: &str, call: &Call) -> Vec<Frame> {
    let mut frames = vec![message_start(call, &Reply::default())];
    frames.push(block_start(0, json!({"type": "text", "text": ""})));
    for piece in split_chunks(text, 3) {
        frames.push(block_delta(0, json!({"type": "text_delta", "text": piece})));
    }
    frames
}

fn tool_id(call: &Call, i: usize, id: &Option<String>) -> String {
    id.clone()
        .unwrap_or_else(|| format!("toolu_fake_{}_{i}", call.seq))
}

fn stop_reason(reply: &Reply) -> String {
    reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.tool_calls.is_empty() {
            "end_turn".to_owned()
        } else {
            "tool_use".to_owned()
        }
    })
}

fn reply_frames(reply: &Reply, call: &Call) -> Vec<Frame> {
    let mut frames = vec![message_start(call, reply)];
    let mut index = 0;
    if let Some((thinking, signature)) = &reply.thinking {
        frames.push(block_start(
            index,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ));
        for piece in split_chunks(thinking, 8) {
            frames.push(block_delta(
                index,
                json!({"type": "thinking_delta", "thinking": piece}),
            ));
        }
        frames.push(block_delta(
            index,
            json!({"type": "signature_delta", "signature": signature}),
        ));
        frames.push(block_stop(index));
        index += 1;
    }
    frames.push(event("ping", &json!({"type": "ping"})));
    if let Some(release) = reply.hold.clone().filter(|_| reply.text.is_empty()) {
        frames.push(Frame::Hold(release));
    }
    if !reply.text.is_empty() {
        frames.push(block_start(index, json!({"type": "text", "text": ""})));
        for (n, piece) in split_chunks(&reply.text, reply.chunk_chars)
            .into_iter()
            .enumerate()
        {
            frames.push(block_delta(
                index,
                json!({"type": "text_delta", "text": piece}),
            ));
            if n == 0
                && let Some(release) = &reply.hold
            {
                frames.push(Frame::Hold(release.clone()));
            }
            if let Some(pause) = reply.delta_pause {
                frames.push(Frame::Pause(pause));
            }
        }
        frames.push(block_stop(index));
        index += 1;
    }
    for (i, tool) in reply.tool_calls.iter().enumerate() {
        let id = tool_id(call, i, &tool.id);
        frames.push(block_start(
            index,
            json!({"type": "tool_use", "id": id, "name": tool.name, "input": {}}),
        ));
        for piece in split_pieces(&tool.input, tool.pieces) {
            frames.push(block_delta(
                index,
                json!({"type": "input_json_delta", "partial_json": piece}),
            ));
        }
        frames.push(block_stop(index));
        index += 1;
    }
    frames.push(event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
                "usage": {"output_tokens": reply.usage.output}}),
    ));
    frames.push(event("message_stop", &json!({"type": "message_stop"})));
    frames
}

/// A non-streaming `message` object.
fn message_json(reply: &Reply, call: &Call) -> Value {
    let mut content = Vec::new();
    if let Some((thinking, signature)) = &reply.thinking {
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    for (i, tool) in reply.tool_calls.iter().enumerate() {
        let input: Value = serde_json::from_str(&tool.input).unwrap_or_else(|_| json!({}));
        content.push(json!({"type": "tool_use", "id": tool_id(call, i, &tool.id), "name": tool.name, "input": input}));
    }
    json!({
        "id": format!("msg_fake_{}", call.seq), "type": "message", "role": "assistant", "model": call.model,
        "content": content, "stop_reason": stop_reason(reply), "stop_sequence": null,
        "usage": {"input_tokens": reply.usage.input, "output_tokens": reply.usage.output,
                  "cache_creation_input_tokens": reply.usage.cache_write,
                  "cache_read_input_tokens": reply.usage.cache_read},
    })
}

/// Status, Anthropic error type and message for `error`.
fn error_parts(error: &HttpError, call: &Call) -> (u16, &'static str, String) {
    let (status, kind, message) = match error.kind {
        ErrorKind::Unauthorized => (
            401,
            "authentication_error",
            format!("invalid x-api-key: {}", call.key),
        ),
        ErrorKind::Forbidden => (
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.".into(),
        ),
        ErrorKind::BadRequest => (
            400,
            "invalid_request_error",
            "messages.0.content: Input should be a valid list".into(),
        ),
        ErrorKind::PromptTooLong => (
            400,
            "invalid_request_error",
            "prompt is too long: 215000 tokens > 200000 maximum".into(),
        ),
        ErrorKind::RateLimited { .. } => (
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit".into(),
        ),
        ErrorKind::Internal => (500, "api_error", "Internal server error".into()),
        ErrorKind::Overloaded => (529, "overloaded_error", "Overloaded".into()),
        ErrorKind::NotFound => (404, "not_found_error", format!("model: {}", call.model)),
    };
    (status, kind, error.message.clone().unwrap_or(message))
}

fn error_response(error: &HttpError, call: &Call) -> Response {
    let (status, kind, message) = error_parts(error, call);
    let headers: Vec<(String, String)> = match error.kind {
        ErrorKind::RateLimited { retry_after } => {
            vec![("retry-after".into(), retry_after.to_string())]
        }
        _ => Vec::new(),
    };
    json_error(status, kind, &message, &headers)
}

/// An error in Anthropic's shape (also used for validation failures).
pub(crate) fn json_error(
    status: u16,
    kind: &str,
    message: &str,
    headers: &[(String, String)],
) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"});
    body::json(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        &body,
        headers,
    )
}
