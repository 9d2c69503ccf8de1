//! Strict request validation, as the real APIs do it: a request the real Anthropic or OpenAI
//! endpoint would reject is rejected here too (400/401 with the real message), so a test
//! notices a malformed transcript instead of passing against a lenient fake.

use std::collections::HashSet;
use std::sync::LazyLock;

use axum::http::HeaderMap;
use regex::Regex;
use serde_json::Value;

/// Why a request was refused.
#[derive(Debug, Clone)]
pub(crate) struct Rejection {
    pub status: u16,
    /// Anthropic error type (`invalid_request_error`, `authentication_error`).
    pub kind: &'static str,
    pub message: String,
}

fn invalid(message: impl Into<String>) -> Rejection {
    Rejection {
        status: 400,
        kind: "invalid_request_error",
        message: message.into(),
    }
}

static TOOL_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-zA-Z0-9_-]{1,64}$").expect("regex"));

const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn blocks(message: &Value) -> Vec<&Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn typ(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Validates a `/v1/messages` request like Anthropic does.
pub(crate) fn anthropic(headers: &HeaderMap, body: &Value) -> Result<(), Rejection> {
    if headers.get("x-api-key").is_none() {
        return Err(Rejection {
            status: 401,
            kind: "authentication_error",
            message: "x-api-key header is required".into(),
        });
    }
    if headers.get("anthropic-version").is_none() {
        return Err(invalid("anthropic-version: header is required"));
    }
    if str_at(body, "model").is_empty() {
        return Err(invalid("model: Field required"));
    }
    if body
        .get("max_tokens")
        .and_then(Value::as_u64)
        .is_none_or(|n| n == 0)
    {
        return Err(invalid("max_tokens: Field required"));
    }
    anthropic_tools(body)?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("messages: Field required"))?;
    if messages.is_empty() {
        return Err(invalid("messages: at least one message is required"));
    }
    if str_at(&messages[0], "role") != "user" {
        return Err(invalid(
            "messages: first message must use the \"user\" role",
        ));
    }
    for (i, message) in messages.iter().enumerate() {
        anthropic_message(i, message, messages)?;
    }
    let breakpoints = body.to_string().matches("\"cache_control\"").count();
    if breakpoints > 4 {
        return Err(invalid(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
        )));
    }
    Ok(())
}

fn anthropic_tools(body: &Value) -> Result<(), Rejection> {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, tool) in tools.iter().enumerate() {
        if !TOOL_NAME.is_match(str_at(tool, "name")) {
            return Err(invalid(format!(
                "tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )));
        }
        if !tool.get("input_schema").is_some_and(Value::is_object) {
            return Err(invalid(format!(
                "tools.{i}.custom.input_schema: Field required"
            )));
        }
    }
    Ok(())
}

fn tool_use_ids(message: &Value) -> Vec<&str> {
    blocks(message)
        .into_iter()
        .filter(|b| typ(b) == "tool_use")
        .map(|b| str_at(b, "id"))
        .collect()
}

fn anthropic_message(i: usize, message: &Value, all: &[Value]) -> Result<(), Rejection> {
    let role = str_at(message, "role");
    if role != "user" && role != "assistant" && role != "system" {
        return Err(invalid(format!(
            "messages.{i}.role: Input should be 'user', 'assistant' or 'system'"
        )));
    }
    if role == "system" {
        system_placement(i, all)?;
    }
    if i > 0 && str_at(&all[i - 1], "role") == role {
        return Err(invalid(format!(
            "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"
        )));
    }
    let content = blocks(message);
    let is_final_assistant = role == "assistant" && i + 1 == all.len();
    let empty = match message.get("content") {
        Some(Value::String(s)) => s.is_empty(),
        _ => content.is_empty(),
    };
    if empty && !is_final_assistant {
        return Err(invalid(format!(
            "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
        )));
    }
    for (j, block) in content.iter().enumerate() {
        anthropic_block(i, j, role, block)?;
    }
    if role == "assistant" {
        let ids = tool_use_ids(message);
        let mut seen = HashSet::new();
        if let Some(dup) = ids.iter().find(|id| !seen.insert(**id)) {
            return Err(invalid(format!(
                "messages.{i}: `tool_use` ids must be unique: {dup}"
            )));
        }
        let answered: HashSet<&str> = all
            .get(i + 1)
            .map(blocks)
            .unwrap_or_default()
            .into_iter()
            .filter(|b| typ(b) == "tool_result")
            .map(|b| str_at(b, "tool_use_id"))
            .collect();
        let missing: Vec<&str> = ids
            .into_iter()
            .filter(|id| !answered.contains(id))
            .collect();
        if !missing.is_empty() {
            return Err(invalid(format!(
                "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                i + 1,
                missing.join(", ")
            )));
        }
    } else {
        let previous: HashSet<&str> = i
            .checked_sub(1)
            .map(|p| tool_use_ids(&all[p]))
            .unwrap_or_default()
            .into_iter()
            .collect();
        for (j, block) in content
            .iter()
            .enumerate()
            .filter(|(_, b)| typ(b) == "tool_result")
        {
            let id = str_at(block, "tool_use_id");
            if !previous.contains(id) {
                return Err(invalid(format!(
                    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                )));
            }
        }
    }
    Ok(())
}

/// Where a mid-conversation system message may sit (Claude Code sends them): right after a
/// `user` message, and either last or followed by an `assistant` message.
fn system_placement(i: usize, all: &[Value]) -> Result<(), Rejection> {
    let before = i.checked_sub(1).map(|p| str_at(&all[p], "role"));
    let after = all.get(i + 1).map(|m| str_at(m, "role"));
    if before != Some("user") || after.is_some_and(|r| r != "assistant") {
        return Err(invalid(format!(
            "messages.{i}: a system message must follow a user message and be the last message or be followed by an assistant message"
        )));
    }
    Ok(())
}

fn anthropic_block(i: usize, j: usize, role: &str, block: &Value) -> Result<(), Rejection> {
    let at = format!("messages.{i}.content.{j}");
    match (typ(block), role) {
        ("text", _) if str_at(block, "text").is_empty() => {
            Err(invalid("messages: text content blocks must be non-empty"))
        }
        ("text", _) => Ok(()),
        ("image", "user") => {
            let source = block.get("source").cloned().unwrap_or_default();
            if typ(&source) != "base64" || str_at(&source, "data").is_empty() {
                return Err(invalid(format!(
                    "{at}.image.source: invalid base64 image source"
                )));
            }
            if !IMAGE_TYPES.contains(&str_at(&source, "media_type")) {
                return Err(invalid(format!(
                    "{at}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
                )));
            }
            Ok(())
        }
        ("tool_use", "assistant") => {
            if str_at(block, "id").is_empty() || !TOOL_NAME.is_match(str_at(block, "name")) {
                return Err(invalid(format!("{at}.tool_use: invalid id or name")));
            }
            if !block.get("input").is_some_and(Value::is_object) {
                return Err(invalid(format!(
                    "{at}.tool_use.input: Input should be a valid dictionary"
                )));
            }
            Ok(())
        }
        ("tool_result", "user") => Ok(()),
        ("thinking" | "redacted_thinking", "assistant") => {
            if typ(block) == "thinking" && str_at(block, "signature").is_empty() {
                return Err(invalid(format!("{at}.thinking.signature: Field required")));
            }
            Ok(())
        }
        (other, role) => Err(invalid(format!(
            "{at}: a `{other}` block is not allowed in a {role} message"
        ))),
    }
}

/// Validates a `/chat/completions` request like OpenAI does.
pub(crate) fn openai(headers: &HeaderMap, body: &Value) -> Result<(), Rejection> {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !auth.starts_with("Bearer ") {
        return Err(Rejection {
            status: 401,
            kind: "invalid_request_error",
            message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).".into(),
        });
    }
    if str_at(body, "model").is_empty() {
        return Err(invalid("you must provide a model parameter"));
    }
    if body.get("stream_options").is_some() && body.get("stream") != Some(&Value::Bool(true)) {
        return Err(invalid(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ));
    }
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, tool) in tools.iter().enumerate() {
        let name = tool
            .get("function")
            .map(|f| str_at(f, "name"))
            .unwrap_or_default();
        if typ(tool) != "function" || !TOOL_NAME.is_match(name) {
            return Err(invalid(format!(
                "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            )));
        }
    }
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("Missing required parameter: 'messages'."))?;
    if messages.is_empty() {
        return Err(invalid(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        ));
    }
    openai_messages(messages)
}

fn openai_messages(messages: &[Value]) -> Result<(), Rejection> {
    // The ids of the latest assistant tool_calls still allowed to be answered.
    let mut open: Vec<String> = Vec::new();
    let mut answerable: HashSet<String> = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        let role = str_at(message, "role");
        if role != "tool" && !open.is_empty() {
            return Err(unanswered(&open));
        }
        if role != "tool" {
            answerable.clear();
        }
        match role {
            "system" | "developer" | "user" => openai_user_content(i, message)?,
            "assistant" => {
                let calls = message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if calls.is_empty() && !message.get("content").is_some_and(Value::is_string) {
                    return Err(invalid(format!(
                        "Invalid value for 'messages[{i}].content': expected a string, got null."
                    )));
                }
                for (j, call) in calls.iter().enumerate() {
                    let function = call.get("function").cloned().unwrap_or_default();
                    if str_at(call, "id").is_empty()
                        || !TOOL_NAME.is_match(str_at(&function, "name"))
                    {
                        return Err(invalid(format!(
                            "Invalid 'messages[{i}].tool_calls[{j}]': missing id or invalid function name."
                        )));
                    }
                    if !function.get("arguments").is_some_and(Value::is_string) {
                        return Err(invalid(format!(
                            "Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string, but got an object instead."
                        )));
                    }
                    open.push(str_at(call, "id").to_owned());
                    answerable.insert(str_at(call, "id").to_owned());
                }
            }
            "tool" => {
                let id = str_at(message, "tool_call_id");
                if !answerable.contains(id) {
                    return Err(invalid(
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                    ));
                }
                open.retain(|o| o != id);
            }
            other => {
                return Err(invalid(format!(
                    "Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'."
                )));
            }
        }
    }
    if !open.is_empty() {
        return Err(unanswered(&open));
    }
    Ok(())
}

fn unanswered(open: &[String]) -> Rejection {
    invalid(format!(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
        open.join(", ")
    ))
}

fn openai_user_content(i: usize, message: &Value) -> Result<(), Rejection> {
    match message.get("content") {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) if !parts.is_empty() => {
            for (j, part) in parts.iter().enumerate() {
                let ok = match typ(part) {
                    "text" => part.get("text").is_some_and(Value::is_string),
                    "image_url" => part.get("image_url").is_some_and(|u| {
                        str_at(u, "url").starts_with("data:")
                            || str_at(u, "url").starts_with("http")
                    }),
                    _ => false,
                };
                if !ok {
                    return Err(invalid(format!(
                        "Invalid 'messages[{i}].content[{j}]': unsupported or malformed content part."
                    )));
                }
            }
            Ok(())
        }
        _ => Err(invalid(format!(
            "Invalid 'messages[{i}].content': expected a string or a non-empty array of content parts."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-api-key", "k".parse().unwrap());
        h.insert("anthropic-version", "2023-06-01".parse().unwrap());
        h
    }

    fn check(roles: &[&str]) -> Result<(), Rejection> {
        let messages: Vec<Value> = roles
            .iter()
            .map(|r| json!({"role": r, "content": [{"type": "text", "text": "x"}]}))
            .collect();
        let body = json!({"model": "m", "max_tokens": 10, "messages": messages});
        anthropic(&headers(), &body)
    }

    #[test]
    fn a_system_message_after_a_user_message_is_accepted() {
        check(&["user", "system"]).unwrap();
        check(&["user", "system", "assistant", "user"]).unwrap();
    }

    #[test]
    fn a_misplaced_system_message_is_rejected() {
        for roles in [
            &["system", "user"][..],
            &["user", "assistant", "system"],
            &["user", "system", "user"],
            &["user", "system", "system", "assistant"],
        ] {
            let err = check(roles).unwrap_err();
            assert_eq!(err.status, 400, "{roles:?}");
        }
        assert!(check(&["user", "tool"]).is_err());
    }
}
