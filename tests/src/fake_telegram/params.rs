//! Reading Bot API parameters the way Telegram does: the same field may arrive as a JSON value
//! (JSON bodies) or as a string (multipart bodies: numbers, booleans and objects as text).

use serde_json::Value;

/// An integer: a JSON number or a numeric string.
pub(crate) fn int(params: &Value, key: &str) -> Option<i64> {
    match params.get(key)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A string (numbers are not strings here).
pub(crate) fn string<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key)?.as_str()
}

/// A boolean: JSON `true`/`false` or the strings `"true"`/`"false"`.
pub(crate) fn boolean(params: &Value, key: &str) -> Option<bool> {
    match params.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// An object or array: the JSON value itself, or a string holding JSON.
pub(crate) fn structured(params: &Value, key: &str) -> Option<Value> {
    match params.get(key)? {
        Value::String(s) => serde_json::from_str(s).ok(),
        Value::Null => None,
        v => Some(v.clone()),
    }
}

/// Present and not JSON `null`.
pub(crate) fn has(params: &Value, key: &str) -> bool {
    params.get(key).is_some_and(|v| !v.is_null())
}
