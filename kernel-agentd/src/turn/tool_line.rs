//! One-line, redacted descriptions of tool inputs and results for `ToolStarted` / `ToolFinished`
//! (the events' `input_summary` / `summary` fields).

use kernel_common::Redactor;
use serde_json::Value;

use crate::tools::ToolOutput;

/// Longest line, in characters.
pub(super) const LINE_CHARS: usize = 120;

/// What replaces the value of a credential-looking field.
const HIDDEN: &str = "[REDACTED]";

/// Field-name parts that mark a value as a credential.
const SENSITIVE_PARTS: &[&str] = &[
    "token",
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "pwd",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "credentials",
];

/// The input as compact JSON on one line: credential-looking fields hidden, known secrets
/// masked, at most [`LINE_CHARS`] characters.
pub(super) fn input_line(input: &Value, redactor: &Redactor) -> String {
    let shown = match input {
        Value::Object(map) if map.is_empty() => String::new(),
        other => hide_credentials(other).to_string(),
    };
    one_line(&redactor.redact(&shown), LINE_CHARS)
}

/// The result's first line (or an error's message), masked, at most [`LINE_CHARS`] characters.
pub(super) fn result_line(output: &ToolOutput, redactor: &Redactor) -> String {
    let error = serde_json::from_str::<Value>(&output.content)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
    let text = match error {
        Some(message) if output.is_error => message,
        _ => output
            .content
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .to_owned(),
    };
    one_line(&redactor.redact(&text), LINE_CHARS)
}

/// `text` with whitespace runs collapsed to one space, cut to `max` characters (with `…`).
pub(super) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    kernel_common::text::fit(&flat, max).into_owned()
}

fn hide_credentials(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_sensitive(k) {
                        Value::String(HIDDEN.into())
                    } else {
                        hide_credentials(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(hide_credentials).collect()),
        other => other.clone(),
    }
}

/// Whether a field name such as `api_key`, `X-Auth-Token` or `password` names a credential.
fn is_sensitive(field: &str) -> bool {
    field
        .split(['_', '-', '.', ' '])
        .flat_map(split_camel)
        .any(|part| SENSITIVE_PARTS.contains(&part.to_ascii_lowercase().as_str()))
}

/// `apiKey` → `api`, `Key`.
fn split_camel(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices().skip(1) {
        if c.is_ascii_uppercase()
            && s[..i]
                .chars()
                .last()
                .is_some_and(|p| p.is_ascii_lowercase())
        {
            parts.push(&s[start..i]);
            start = i;
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn input_summaries_are_one_short_redacted_line() {
        let r = Redactor::new(["sk-live-0123456789abcdef"]);
        let s = input_line(
            &json!({"query": "rust\nasync", "apiKey": "x", "headers": {"X-Auth-Token": "t"}}),
            &r,
        );
        assert_eq!(
            s,
            r#"{"apiKey":"[REDACTED]","headers":{"X-Auth-Token":"[REDACTED]"},"query":"rust\nasync"}"#
        );
        let s = input_line(
            &json!({"task": "use sk-live-0123456789abcdef now", "keyword": "k"}),
            &r,
        );
        assert!(
            !s.contains("sk-live-0123456789abcdef") && s.contains("\"keyword\":\"k\""),
            "{s}"
        );
        let long = input_line(&json!({"text": "x".repeat(500)}), &r);
        assert_eq!(long.chars().count(), LINE_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(input_line(&json!({}), &r), "");
    }

    #[test]
    fn result_summaries_show_the_first_line_or_the_error() {
        let r = Redactor::default();
        assert_eq!(
            result_line(&ToolOutput::ok("\n first  line \nsecond"), &r),
            "first line"
        );
        assert_eq!(
            result_line(&ToolOutput::error("no such file"), &r),
            "no such file"
        );
        assert_eq!(
            result_line(&ToolOutput::ok(r#"{"error":"not an error"}"#), &r),
            r#"{"error":"not an error"}"#
        );
    }
}
