//! Anthropic extended thinking, checked as strictly as the real API: the `thinking` parameter
//! (`type: enabled`, a budget of at least 1024 below `max_tokens`, temperature 1 only), and with
//! thinking on, the round trip of thinking blocks in a tool loop — the last assistant message
//! before tool results must start with its thinking, and every thinking block sent back must be
//! exactly one the fake issued (text and signature byte-for-byte; redacted data likewise).

use std::collections::HashMap;

use serde_json::Value;

use super::validate::Rejection;

/// The thinking blocks the fake streamed: signature (or redacted data) → thinking text.
pub(crate) type Issued = HashMap<String, String>;

fn invalid(message: impl Into<String>) -> Rejection {
    Rejection {
        status: 400,
        kind: "invalid_request_error",
        message: message.into(),
    }
}

/// Checks `body`'s `thinking` parameter and, when thinking is enabled, its thinking blocks.
pub(crate) fn check(body: &Value, issued: &Issued) -> Result<(), Rejection> {
    let Some(thinking) = body.get("thinking") else {
        return Ok(());
    };
    // Other modes (`disabled`, and those newer clients such as Claude Code send) are not
    // modelled: only the budgeted `enabled` mode Kernel sends is checked.
    if thinking.get("type").and_then(Value::as_str) != Some("enabled") {
        return Ok(());
    }
    let budget = thinking.get("budget_tokens").and_then(Value::as_u64);
    let Some(budget) = budget.filter(|b| *b >= 1024) else {
        return Err(invalid(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ));
    };
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0);
    if max_tokens <= budget {
        return Err(invalid(
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ));
    }
    if body
        .get("temperature")
        .and_then(Value::as_f64)
        .is_some_and(|t| t != 1.0)
    {
        return Err(invalid(
            "`temperature` may only be set to 1 when thinking is enabled",
        ));
    }
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, message) in messages.iter().enumerate() {
        for (j, block) in content(message).iter().enumerate() {
            round_tripped(i, j, block, issued)?;
        }
    }
    last_assistant_starts_with_thinking(messages)
}

fn content(message: &Value) -> &[Value] {
    message
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn block_type(block: &Value) -> &str {
    block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A thinking block sent back must be one the fake issued, unchanged.
fn round_tripped(i: usize, j: usize, block: &Value, issued: &Issued) -> Result<(), Rejection> {
    let str_at = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    let genuine = match block_type(block) {
        "thinking" => {
            issued.get(str_at("signature")).map(String::as_str) == Some(str_at("thinking"))
        }
        "redacted_thinking" => issued.contains_key(str_at("data")),
        _ => return Ok(()),
    };
    if genuine {
        Ok(())
    } else {
        Err(invalid(format!(
            "messages.{i}.content.{j}: Invalid `signature` in `{}` block",
            block_type(block)
        )))
    }
}

/// When the conversation ends in tool results, the assistant message that asked for them must
/// start with a thinking block.
fn last_assistant_starts_with_thinking(messages: &[Value]) -> Result<(), Rejection> {
    let Some(last) = messages.last() else {
        return Ok(());
    };
    if !content(last).iter().any(|b| block_type(b) == "tool_result") {
        return Ok(());
    }
    let Some((i, assistant)) = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.get("role").and_then(Value::as_str) == Some("assistant"))
    else {
        return Ok(());
    };
    let first = content(assistant)
        .first()
        .map(block_type)
        .unwrap_or_default();
    if matches!(first, "thinking" | "redacted_thinking") {
        return Ok(());
    }
    Err(invalid(format!(
        "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found \
         `{first}`. When `thinking` is enabled, a final `assistant` message must start with a \
         thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We \
         recommend you include thinking blocks from previous turns. To avoid this requirement, \
         disable `thinking`. Please consult our documentation at \
         https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    )))
}
