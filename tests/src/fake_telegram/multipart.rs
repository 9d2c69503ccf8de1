//! A small `multipart/form-data` reader for the fake Bot API: text fields become parameters,
//! file parts are resolved through teloxide's `attach://<name>` references.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// One part of the body.
#[derive(Debug)]
struct Part {
    name: String,
    /// Present (possibly empty) when the part is a file.
    file_name: Option<String>,
    data: Vec<u8>,
}

/// A multipart body read into parameters and uploaded files.
#[derive(Debug, Default)]
pub(crate) struct Form {
    /// Text fields as strings; files as `{"file_name": …, "len": n}`.
    pub params: Value,
    /// Uploaded bytes, keyed by the field that refers to them.
    pub files: HashMap<String, Vec<u8>>,
}

/// The boundary of a `multipart/form-data` content type, if it is one.
pub(crate) fn boundary(content_type: &str) -> Option<String> {
    let (mime, rest) = content_type.split_once(';')?;
    if !mime.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    rest.split(';').find_map(|param| {
        let (key, value) = param.trim().split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// Reads a body with `boundary` into a [`Form`].
pub(crate) fn read(boundary: &str, body: &[u8]) -> Result<Form, String> {
    let parts = split(boundary, body)?;
    let mut fields = Map::new();
    let mut uploads: HashMap<String, (String, Vec<u8>)> = HashMap::new();
    for part in parts {
        match part.file_name {
            Some(file_name) => {
                uploads.insert(part.name, (file_name, part.data));
            }
            None => {
                let text = String::from_utf8(part.data)
                    .map_err(|_| format!("field {} is not UTF-8", part.name))?;
                fields.insert(part.name, Value::String(text));
            }
        }
    }
    let mut files = HashMap::new();
    for (key, value) in fields.iter_mut() {
        let Some(name) = value.as_str().and_then(|v| v.strip_prefix("attach://")) else {
            continue;
        };
        let (file_name, data) = uploads
            .remove(name)
            .ok_or_else(|| format!("{key} refers to a missing part {name}"))?;
        *value = file_value(&file_name, &data);
        files.insert(key.clone(), data);
    }
    for (name, (file_name, data)) in uploads {
        fields.insert(name.clone(), file_value(&file_name, &data));
        files.insert(name, data);
    }
    Ok(Form {
        params: Value::Object(fields),
        files,
    })
}

fn file_value(file_name: &str, data: &[u8]) -> Value {
    serde_json::json!({ "file_name": file_name, "len": data.len() })
}

fn split(boundary: &str, body: &[u8]) -> Result<Vec<Part>, String> {
    let delimiter = format!("--{boundary}");
    let next_delimiter = format!("\r\n--{boundary}");
    let start = find(body, delimiter.as_bytes()).ok_or("no opening boundary")?;
    let mut rest = &body[start + delimiter.len()..];
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("no line break after a boundary")?;
        let head_end = find(rest, b"\r\n\r\n").ok_or("unterminated part headers")?;
        let head = std::str::from_utf8(&rest[..head_end]).map_err(|_| "non-UTF-8 headers")?;
        rest = &rest[head_end + 4..];
        let end = find(rest, next_delimiter.as_bytes()).ok_or("unterminated part")?;
        let (name, file_name) = disposition(head)?;
        parts.push(Part {
            name,
            file_name,
            data: rest[..end].to_vec(),
        });
        rest = &rest[end + next_delimiter.len()..];
    }
}

/// `name` and `filename` of a part's `Content-Disposition: form-data` header.
fn disposition(head: &str) -> Result<(String, Option<String>), String> {
    let line = head
        .split("\r\n")
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case("content-disposition")
                .then_some(value)
        })
        .ok_or("a part without Content-Disposition")?;
    let mut name = None;
    let mut file_name = None;
    for param in line.split(';').skip(1) {
        let Some((key, value)) = param.trim().split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_owned();
        match key.trim() {
            "name" => name = Some(value),
            "filename" => file_name = Some(value),
            _ => {}
        }
    }
    Ok((name.ok_or("a part without a name")?, file_name))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
