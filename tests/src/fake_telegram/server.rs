//! HTTP routing of the fake Bot API: `/bot<token>/<Method>` (JSON or multipart bodies, names
//! matched case-insensitively) and `/file/bot<token>/<file_path>` downloads; token checks,
//! injected failures first, and one [`Call`] logged per request with its outcome.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, Uri, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::Shared;
use super::hold::{self, take_hold};
use super::model::{Call, DOWNLOAD, Failure, take_injected};
use super::wire::{self, ApiError};
use super::{methods, multipart, polling};

/// Every request lands here.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let segments: Vec<String> = uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    match segments.as_slice() {
        [file, bot, path @ ..] if file == "file" && !path.is_empty() => {
            let token = bot.strip_prefix("bot").unwrap_or_default();
            download(&shared, token, &path.join("/"))
        }
        [bot, name] if bot.starts_with("bot") => {
            api_call(&shared, &bot["bot".len()..], name, &headers, &body).await
        }
        _ => {
            let error = ApiError::not_found();
            shared.record(failed("", Value::Null, &error, false));
            error.response()
        }
    }
}

async fn api_call(
    shared: &Shared,
    token: &str,
    name: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let method = name.to_ascii_lowercase();
    if token != shared.token {
        return reject(shared, &method, Value::Null, ApiError::unauthorized());
    }
    if !methods::is_known(&method) {
        return reject(shared, &method, Value::Null, ApiError::not_found());
    }
    let (params, files) = match read_body(headers, body) {
        Ok(read) => read,
        Err(detail) => {
            let error = ApiError::bad_request(&detail);
            return reject(shared, &method, Value::Null, error);
        }
    };
    if let Some(response) = injected(shared, &method, &params) {
        return response;
    }
    let held = take_hold(&mut shared.holds(), &method, &params);
    if let Some(held) = held {
        hold::wait(&held).await;
    }
    let outcome = if method == "getupdates" {
        polling::get_updates(shared, &params).await
    } else {
        let mut st = shared.lock();
        methods::perform(&mut st, &method, &params, &files)
    };
    match outcome {
        Ok(result) => {
            let response = wire::ok_response(&result);
            shared.record(Call {
                method,
                params,
                ok: true,
                error_code: None,
                description: None,
                result: Some(result),
                injected: false,
                at: std::time::Instant::now(),
            });
            response
        }
        Err(error) => reject(shared, &method, params, error),
    }
}

fn download(shared: &Shared, token: &str, path: &str) -> Response {
    let params = json!({ "file_path": path });
    if token != shared.token {
        return reject(shared, DOWNLOAD, params, ApiError::not_found());
    }
    if let Some(response) = injected(shared, DOWNLOAD, &params) {
        return response;
    }
    let data = shared.lock().file_at(path).and_then(|f| f.data.clone());
    let Some(data) = data else {
        return reject(shared, DOWNLOAD, params, ApiError::not_found());
    };
    shared.record(Call {
        method: DOWNLOAD.to_owned(),
        params,
        ok: true,
        error_code: None,
        description: None,
        result: Some(json!({ "len": data.len() })),
        injected: false,
        at: std::time::Instant::now(),
    });
    wire::file_response(data)
}

/// The answer of an injected failure for this call, if one matches (logged).
fn injected(shared: &Shared, method: &str, params: &Value) -> Option<Response> {
    let failure = take_injected(&mut shared.injections(), method, params)?;
    let Some(error) = ApiError::injected(&failure) else {
        shared.record(Call {
            method: method.to_owned(),
            params: params.clone(),
            ok: false,
            error_code: None,
            description: Some("connection broken (injected)".to_owned()),
            result: None,
            injected: true,
            at: std::time::Instant::now(),
        });
        return Some(wire::broken_response());
    };
    shared.record(failed(method, params.clone(), &error, true));
    if let Failure::Page(status) = failure {
        return Some(wire::page_response(status));
    }
    Some(error.response())
}

fn reject(shared: &Shared, method: &str, params: Value, error: ApiError) -> Response {
    shared.record(failed(method, params, &error, false));
    error.response()
}

fn failed(method: &str, params: Value, error: &ApiError, injected: bool) -> Call {
    Call {
        method: method.to_owned(),
        params,
        ok: false,
        error_code: Some(error.code),
        description: Some(error.description.clone()),
        result: None,
        injected,
        at: std::time::Instant::now(),
    }
}

type Body = (Value, HashMap<String, Vec<u8>>);

/// Parameters and uploaded files of a JSON, multipart or empty body.
fn read_body(headers: &HeaderMap, body: &[u8]) -> Result<Body, String> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if let Some(boundary) = multipart::boundary(content_type) {
        let form = multipart::read(&boundary, body)?;
        return Ok((form.params, form.files));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok((json!({}), HashMap::new()));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(params @ Value::Object(_)) => Ok((params, HashMap::new())),
        _ => Err("can't parse JSON object".to_owned()),
    }
}

/// Decodes `%XX` escapes (teloxide sends a file path's `/` as `%2F`).
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
