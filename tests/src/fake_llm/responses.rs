//! The fake's OpenAI Responses side (`POST /v1/responses`, what Codex speaks with
//! `wire_api = "responses"`): a streamed reply as SSE `event:`/`data:` pairs —
//! `response.created`, per output item `response.output_item.added`, text in
//! `response.output_text.delta`s, `response.output_item.done` (a `message` with `output_text`, or
//! a `function_call` with its `call_id`, `name` and `arguments`), then `response.completed` with
//! the usage; a tool call scripted as `<namespace>/<name>` (a tool of a `namespace` tool group,
//! as Codex offers an MCP server's tools) carries that `namespace`. Errors are `{"error":{…}}` JSON as on chat completions. Only streaming requests are
//! served (Codex always streams); validation checks what the real API refuses: no `model`, an
//! `input` that is not a list, a missing bearer key, and a `function_call_output` whose `call_id`
//! no earlier `function_call` of the same `input` issued.

use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};

use super::Call;
use super::body::{self, Frame, event};
use super::script::{Reply, Script, split_chunks};
use super::validate::Rejection;

/// The response to one `/responses` call.
pub(crate) fn render(script: Script, call: &Call) -> Response {
    match script {
        Script::Reply(reply) => body::sse(reply_frames(&reply, call), call.shutdown.clone()),
        // Errors, stalls and the other failure scripts look as on chat completions.
        other => super::openai::render(other, call),
    }
}

/// Refuses what the real Responses API refuses (see the module doc).
pub(crate) fn validate(headers: &HeaderMap, json: &Value) -> Result<(), Rejection> {
    let bad = |message: String| Rejection {
        status: 400,
        kind: "invalid_request_error",
        message,
    };
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|k| !k.trim().is_empty());
    if !bearer {
        return Err(Rejection {
            status: 401,
            kind: "invalid_request_error",
            message: "You didn't provide an API key.".into(),
        });
    }
    if json.get("model").and_then(Value::as_str).is_none() {
        return Err(bad("Missing required parameter: 'model'.".into()));
    }
    if json.get("stream").and_then(Value::as_bool) != Some(true) {
        return Err(bad("the fake serves only streaming Responses calls".into()));
    }
    let Some(input) = json.get("input").and_then(Value::as_array) else {
        return Err(bad("Invalid type for 'input': expected a list.".into()));
    };
    let mut issued = Vec::new();
    for item in input {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => issued.push(item.get("call_id").cloned()),
            Some("function_call_output") if !issued.contains(&item.get("call_id").cloned()) => {
                return Err(bad(format!(
                    "No tool call found for function call output with call_id {}.",
                    item.get("call_id").unwrap_or(&Value::Null)
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn frame(name: &str, mut data: Value, seq: &mut u64) -> Frame {
    data["type"] = json!(name);
    data["sequence_number"] = json!(*seq);
    *seq += 1;
    event(name, &data)
}

fn response(call: &Call, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": format!("resp_fake{}", call.seq), "object": "response", "created_at": 1_700_000_000,
        "status": status, "model": call.model, "output": output, "usage": usage,
    })
}

fn reply_frames(reply: &Reply, call: &Call) -> Vec<Frame> {
    let mut seq = 0;
    let mut frames = vec![frame(
        "response.created",
        json!({"response": response(call, "in_progress", Vec::new(), Value::Null)}),
        &mut seq,
    )];
    let mut output = Vec::new();
    if !reply.text.is_empty() {
        let id = format!("msg_fake{}", call.seq);
        let index = output.len();
        let empty = json!({"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []});
        frames.push(frame(
            "response.output_item.added",
            json!({"output_index": index, "item": empty}),
            &mut seq,
        ));
        for piece in split_chunks(&reply.text, reply.chunk_chars) {
            frames.push(frame(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
                &mut seq,
            ));
        }
        let item = json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}]});
        frames.push(frame(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            &mut seq,
        ));
        output.push(item);
    }
    for (i, tool) in reply.tool_calls.iter().enumerate() {
        let index = output.len();
        let call_id = tool
            .id
            .clone()
            .unwrap_or_else(|| format!("call_fake_{}_{i}", call.seq));
        let mut item = json!({"type": "function_call", "id": format!("fc_fake{}_{i}", call.seq),
            "status": "completed", "call_id": call_id, "name": tool.name, "arguments": tool.input});
        // A tool of a `namespace` tool group (Codex's MCP servers): scripted as `<namespace>/<name>`.
        if let Some((namespace, name)) = tool.name.split_once('/') {
            item["namespace"] = json!(namespace);
            item["name"] = json!(name);
        }
        frames.push(frame(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
            &mut seq,
        ));
        frames.push(frame(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            &mut seq,
        ));
        output.push(item);
    }
    let u = reply.usage;
    let usage = json!({
        "input_tokens": u.input + u.cache_read, "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.cache_read + u.output,
    });
    frames.push(frame(
        "response.completed",
        json!({"response": response(call, "completed", output, usage)}),
        &mut seq,
    ));
    frames
}
