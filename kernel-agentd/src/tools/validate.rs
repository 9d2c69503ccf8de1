//! A small JSON Schema check of tool inputs (the subset tool schemas use): `type` (one or a
//! list), `properties`, `required`, `additionalProperties: false`, `enum`, `items`,
//! `minimum`/`maximum`, `minLength`/`maxLength`. Unknown keywords are ignored.

use serde_json::Value;

/// Deepest nesting checked; deeper input is refused.
const MAX_DEPTH: usize = 32;

/// `Ok` when `input` matches `schema`; otherwise a short, human-readable reason.
pub fn check_input(schema: &Value, input: &Value) -> Result<(), String> {
    check(schema, input, "input", 0)
}

fn check(schema: &Value, value: &Value, at: &str, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("{at} is nested too deeply"));
    }
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    if let Some(ty) = schema.get("type") {
        let allowed: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| has_type(value, t)) {
            return Err(format!("{at} must be {}", allowed.join(" or ")));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let shown: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!("{at} must be one of {}", shown.join(", ")));
    }
    check_bounds(schema, value, at)?;
    match value {
        Value::Object(map) => check_object(schema, map, at, depth),
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => items.iter().enumerate().try_for_each(|(i, item)| {
                check(item_schema, item, &format!("{at}[{i}]"), depth + 1)
            }),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

fn check_bounds(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    at: &str,
) -> Result<(), String> {
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema
            .get("minimum")
            .and_then(Value::as_f64)
            .filter(|m| n < *m)
        {
            return Err(format!("{at} must be at least {min}"));
        }
        if let Some(max) = schema
            .get("maximum")
            .and_then(Value::as_f64)
            .filter(|m| n > *m)
        {
            return Err(format!("{at} must be at most {max}"));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema
            .get("minLength")
            .and_then(Value::as_u64)
            .filter(|m| len < *m)
        {
            return Err(format!("{at} must have at least {min} characters"));
        }
        if let Some(max) = schema
            .get("maxLength")
            .and_then(Value::as_u64)
            .filter(|m| len > *m)
        {
            return Err(format!("{at} must have at most {max} characters"));
        }
    }
    Ok(())
}

fn check_object(
    schema: &serde_json::Map<String, Value>,
    map: &serde_json::Map<String, Value>,
    at: &str,
    depth: usize,
) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for key in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(key) {
            return Err(format!("{at}.{key} is required"));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, value) in map {
        match properties.and_then(|p| p.get(key)) {
            Some(prop_schema) => check(prop_schema, value, &format!("{at}.{key}"), depth + 1)?,
            None if closed => return Err(format!("{at}.{key} is not a known field")),
            None => {}
        }
    }
    Ok(())
}
