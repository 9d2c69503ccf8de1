//! Response bodies of the fake LLM: a sequence of frames (bytes, holds, stalls, resets) turned
//! into a streaming HTTP response that ends when the fake shuts down.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::script::Release;

/// One step of a streamed body.
#[derive(Debug, Clone)]
pub(crate) enum Frame {
    /// Bytes sent as their own chunk.
    Data(String),
    /// Wait for a release (or shutdown).
    Hold(Release),
    /// Wait this long (a slowly streaming model).
    Pause(std::time::Duration),
    /// Wait for shutdown, then reset.
    Stall,
    /// Reset the connection (no terminating chunk).
    Abort,
}

/// An Anthropic SSE event frame: `event: <name>` + `data: <json>`.
pub(crate) fn event(name: &str, data: &Value) -> Frame {
    Frame::Data(format!("event: {name}\ndata: {data}\n\n"))
}

/// An OpenAI SSE data frame: `data: <payload>`.
pub(crate) fn data(payload: &str) -> Frame {
    Frame::Data(format!("data: {payload}\n\n"))
}

fn reset() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "fake LLM reset the connection",
    )
}

/// A `200 text/event-stream` response streaming `frames`.
pub(crate) fn sse(frames: Vec<Frame>, shutdown: CancellationToken) -> Response {
    stream_response(StatusCode::OK, "text/event-stream", frames, shutdown)
}

/// A response with `status` and `content_type` streaming `frames`.
pub(crate) fn stream_response(
    status: StatusCode,
    content_type: &str,
    frames: Vec<Frame>,
    shutdown: CancellationToken,
) -> Response {
    let state = (frames.into_iter(), shutdown);
    let stream = futures::stream::unfold(Some(state), |state| async move {
        let (mut frames, shutdown) = state?;
        loop {
            match frames.next()? {
                Frame::Data(text) => {
                    return Some((Ok(Bytes::from(text)), Some((frames, shutdown))));
                }
                Frame::Hold(release) => {
                    tokio::select! {
                        () = release.0.notified() => {}
                        () = shutdown.cancelled() => return Some((Err(reset()), None)),
                    }
                }
                Frame::Pause(pause) => {
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = shutdown.cancelled() => return Some((Err(reset()), None)),
                    }
                }
                Frame::Stall => {
                    shutdown.cancelled().await;
                    return Some((Err(reset()), None));
                }
                Frame::Abort => {
                    // Let the server flush what it sent so far, then drop the connection.
                    tokio::task::yield_now().await;
                    return Some((Err(reset()), None));
                }
            }
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A `200` JSON response whose body is sent only once `release` fires (a held non-streaming
/// reply: the head goes out at once, the body waits).
pub(crate) fn held_json(release: Release, value: &Value, shutdown: CancellationToken) -> Response {
    let frames = vec![Frame::Hold(release), Frame::Data(value.to_string())];
    stream_response(StatusCode::OK, "application/json", frames, shutdown)
}

/// A complete JSON response.
pub(crate) fn json(status: StatusCode, value: &Value, extra: &[(String, String)]) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in extra {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(n, v);
        }
    }
    response
}
