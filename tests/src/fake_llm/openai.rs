//! The fake's OpenAI side: scripts rendered as `POST /chat/completions` responses — SSE
//! `data: {chat.completion.chunk}` lines with tool calls in `delta.tool_calls[index]` fragments
//! (interleaved by index), a usage chunk when `stream_options.include_usage`, `data: [DONE]` —
//! non-streaming completions, and errors in `{"error":{"message","type","param","code"}}` form.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::Call;
use super::body::{self, Frame, data};
use super::script::{ErrorKind, HttpError, Reply, Script, split_chunks, split_pieces};

/// The response to one `/chat/completions` call.
pub(crate) fn render(script: Script, call: &Call) -> Response {
    match script {
        Script::Reply(reply) if call.stream => {
            body::sse(reply_frames(&reply, call), call.shutdown.clone())
        }
        Script::Reply(reply) => match &reply.hold {
            Some(release) => body::held_json(
                release.clone(),
                &completion_json(&reply, call),
                call.shutdown.clone(),
            ),
            None => body::json(StatusCode::OK, &completion_json(&reply, call), &[]),
        },
        Script::Error(error) => error_response(&error, call),
        Script::MidStreamError { error, .. } if !call.stream => error_response(&error, call),
        Script::MidStreamError { text, error } => {
            let mut frames = text_frames(&text, call);
            let (_, body) = error_body(&error, call);
            frames.push(data(&body.to_string()));
            body::sse(frames, call.shutdown.clone())
        }
        Script::Stall { ping } => {
            let mut frames = Vec::new();
            if ping {
                frames.push(Frame::Data(": keep-alive\n\n".into()));
            }
            frames.push(Frame::Stall);
            body::sse(frames, call.shutdown.clone())
        }
        Script::AbruptClose { text } => {
            let mut frames = text_frames(&text, call);
            frames.push(Frame::Abort);
            body::sse(frames, call.shutdown.clone())
        }
        Script::Truncated { text } => body::sse(text_frames(&text, call), call.shutdown.clone()),
        Script::Raw {
            status,
            content_type,
            body,
            headers,
        } => super::raw(status, &content_type, body, &headers),
    }
}

fn chunk(call: &Call, delta: Value, finish: Option<&str>) -> Value {
    let mut chunk = json!({
        "id": format!("chatcmpl-fake{}", call.seq), "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": call.model, "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    if call.include_usage {
        chunk["usage"] = Value::Null;
    }
    chunk
}

fn frame(value: &Value) -> Frame {
    data(&value.to_string())
}

/// A role chunk and `text` in small content deltas, unfinished.
fn text_frames(text: &str, call: &Call) -> Vec<Frame> {
    let mut frames = vec![frame(&chunk(
        call,
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    for piece in split_chunks(text, 3) {
        frames.push(frame(&chunk(call, json!({"content": piece}), None)));
    }
    frames
}

fn usage_json(reply: &Reply) -> Value {
    let u = reply.usage;
    json!({
        "prompt_tokens": u.input + u.cache_read, "completion_tokens": u.output,
        "total_tokens": u.input + u.cache_read + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
    })
}

fn call_id(call: &Call, i: usize, id: &Option<String>) -> String {
    id.clone()
        .unwrap_or_else(|| format!("call_fake_{}_{i}", call.seq))
}

fn finish_reason(reply: &Reply) -> String {
    reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.tool_calls.is_empty() {
            "stop".to_owned()
        } else {
            "tool_calls".to_owned()
        }
    })
}

fn reply_frames(reply: &Reply, call: &Call) -> Vec<Frame> {
    let mut frames = Vec::new();
    if reply.quirks.empty_choices_chunk {
        let mut empty = chunk(call, json!({}), None);
        empty["choices"] = json!([]);
        frames.push(frame(&empty));
    }
    frames.push(frame(&chunk(
        call,
        json!({"role": "assistant", "content": ""}),
        None,
    )));
    if let Some((thinking, _)) = &reply.thinking {
        for piece in split_chunks(thinking, 8) {
            frames.push(frame(&chunk(
                call,
                json!({"reasoning_content": piece}),
                None,
            )));
        }
    }
    if let Some(release) = reply.hold.clone().filter(|_| reply.text.is_empty()) {
        frames.push(Frame::Hold(release));
    }
    for (n, piece) in split_chunks(&reply.text, reply.chunk_chars)
        .into_iter()
        .enumerate()
    {
        frames.push(frame(&chunk(call, json!({"content": piece}), None)));
        if n == 0
            && let Some(release) = &reply.hold
        {
            frames.push(Frame::Hold(release.clone()));
        }
    }
    tool_call_frames(reply, call, &mut frames);
    let mut finish = chunk(call, json!({}), Some(&finish_reason(reply)));
    let send_usage = call.include_usage && !reply.quirks.no_usage;
    if send_usage && reply.quirks.usage_in_finish_chunk {
        finish["usage"] = usage_json(reply);
    }
    frames.push(frame(&finish));
    if send_usage && !reply.quirks.usage_in_finish_chunk {
        let mut last = chunk(call, json!({}), None);
        last["choices"] = json!([]);
        last["usage"] = usage_json(reply);
        frames.push(frame(&last));
    }
    if !reply.quirks.no_done {
        frames.push(data("[DONE]"));
    }
    frames
}

/// The first fragment of each call carries id, type and name; argument pieces follow
/// round-robin across calls, so several calls interleave by index.
fn tool_call_frames(reply: &Reply, call: &Call, frames: &mut Vec<Frame>) {
    let mut pieces: Vec<Vec<String>> = Vec::new();
    for (i, tool) in reply.tool_calls.iter().enumerate() {
        let first = json!({"tool_calls": [{"index": i, "id": call_id(call, i, &tool.id), "type": "function",
                                           "function": {"name": tool.name, "arguments": ""}}]});
        frames.push(frame(&chunk(call, first, None)));
        pieces.push(split_pieces(&tool.input, tool.pieces));
    }
    let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..rounds {
        for (i, parts) in pieces.iter().enumerate() {
            if let Some(part) = parts.get(round) {
                let delta = json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]});
                frames.push(frame(&chunk(call, delta, None)));
            }
        }
    }
}

/// A non-streaming `chat.completion`.
fn completion_json(reply: &Reply, call: &Call) -> Value {
    let mut message = json!({"role": "assistant", "content": if reply.text.is_empty() { Value::Null } else { json!(reply.text) }, "refusal": null});
    if let Some((thinking, _)) = &reply.thinking {
        message["reasoning_content"] = json!(thinking);
    }
    if !reply.tool_calls.is_empty() {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"id": call_id(call, i, &t.id), "type": "function", "function": {"name": t.name, "arguments": t.input}}))
            .collect();
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": format!("chatcmpl-fake{}", call.seq), "object": "chat.completion", "created": 1_700_000_000,
        "model": call.model, "system_fingerprint": null,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(reply)}],
        "usage": usage_json(reply),
    })
}

/// Status and `{"error":{…}}` body for `error`.
fn error_body(error: &HttpError, call: &Call) -> (u16, Value) {
    let (status, kind, code, message) = match error.kind {
        ErrorKind::Unauthorized => (401, "invalid_request_error", json!("invalid_api_key"), format!("Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.", call.key)),
        ErrorKind::Forbidden => (403, "invalid_request_error", json!("unsupported_country_region_territory"), "Country, region, or territory not supported".into()),
        ErrorKind::BadRequest => (400, "invalid_request_error", Value::Null, "Invalid value for 'messages': expected an array.".into()),
        ErrorKind::PromptTooLong => (400, "invalid_request_error", json!("context_length_exceeded"), "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.".into()),
        ErrorKind::RateLimited { .. } => (429, "requests", json!("rate_limit_exceeded"), format!("Rate limit reached for {} on requests per min (RPM): Limit 3, Used 3, Requested 1.", call.model)),
        ErrorKind::Internal => (500, "server_error", Value::Null, "The server had an error while processing your request. Sorry about that!".into()),
        ErrorKind::Overloaded => (503, "server_error", Value::Null, "The engine is currently overloaded, please try again later.".into()),
        ErrorKind::NotFound => (404, "invalid_request_error", json!("model_not_found"), format!("The model `{}` does not exist or you do not have access to it.", call.model)),
    };
    let message = error.message.clone().unwrap_or(message);
    (
        status,
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}}),
    )
}

fn error_response(error: &HttpError, call: &Call) -> Response {
    let (status, body) = error_body(error, call);
    let headers: Vec<(String, String)> = match error.kind {
        ErrorKind::RateLimited { retry_after } => {
            vec![("retry-after".into(), retry_after.to_string())]
        }
        _ => Vec::new(),
    };
    body::json(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        &body,
        &headers,
    )
}

/// A 400 in OpenAI's shape (validation failures).
pub(crate) fn json_error(status: u16, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}});
    body::json(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        &body,
        &[],
    )
}
