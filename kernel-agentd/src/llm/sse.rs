//! Server-sent events from a streaming response: the stall timeouts on the byte stream (first
//! byte, then between bytes), SSE framing by `eventsource-stream`, and a driver that feeds
//! events to a provider's [`Decoder`] and yields [`StreamEvent`]s ending in `Done`. A stream
//! never hangs: no response head and first bytes within the first-byte timeout, or no bytes for
//! the idle timeout after that, ends it with [`LlmError::Stalled`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use kernel_common::Redactor;

use super::{EventStream, LlmError, ModelResponse, StreamEvent};
use crate::http::{Endpoint, HttpFailure, error_chain, read_bounded};

/// A provider's wire-format state machine over SSE events.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event, pushing what to show now into `out`. Returns `true` when the
    /// response is complete (nothing more needs to be read).
    fn event(&mut self, event: &Event, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError>;

    /// Whether everything needed has arrived although the provider may still send more (an
    /// OpenAI-compatible `finish_reason` before the usage chunk and `[DONE]`). Once complete, a
    /// closed, broken or quiet connection ends the response normally.
    fn is_complete(&self) -> bool {
        false
    }

    /// The response after completion or at the end of the body; an error when the body ended
    /// before the provider said it was done.
    fn finish(&mut self) -> Result<ModelResponse, LlmError>;
}

/// Refuses a 2xx answer that is not an event stream: a JSON body means the endpoint ignored
/// `stream: true` (or sent an error with status 200); never silently downgraded.
pub(crate) async fn ensure_event_stream(
    response: reqwest::Response,
    deadline: Duration,
    redactor: &Redactor,
    classify: fn(&HttpFailure) -> Option<LlmError>,
) -> Result<reqwest::Response, LlmError> {
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !content_type.starts_with("application/json") {
        return Ok(response);
    }
    let status = response.status();
    let body = tokio::time::timeout(deadline, read_bounded(response))
        .await
        .unwrap_or_default();
    let value: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    if value.get("error").is_some() {
        let failure = HttpFailure::from_body(status, None, &body, redactor);
        return Err(classify(&failure).unwrap_or_else(|| failure.to_error()));
    }
    Err(LlmError::CapabilityMissing {
        message: "the endpoint answered without streaming (application/json instead of text/event-stream); it does not support streaming".to_owned(),
    })
}

/// How long a streaming call may be silent: before its first bytes (reasoning models think
/// first), and between bytes after that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    pub first_byte: Duration,
    pub idle: Duration,
}

impl Timeouts {
    /// A provider's `first_byte_timeout_secs` and `stream_idle_timeout_secs`.
    pub(crate) fn of(cfg: &kernel_common::config::ProviderConfig) -> Self {
        Self {
            first_byte: cfg.first_byte_timeout,
            idle: cfg.stream_idle_timeout,
        }
    }
}

/// The body of `response` as chunks; no first chunk within `first.0` (reported as a stall of
/// `first.1`, the whole first-byte timeout), or no later chunk for `idle`, yields `Stalled` and
/// ends the stream.
fn idle_bytes(
    response: reqwest::Response,
    first: (Duration, Duration),
    idle: Duration,
    redactor: Redactor,
) -> impl Stream<Item = Result<Bytes, LlmError>> + Send {
    let body = Box::pin(response.bytes_stream());
    futures::stream::unfold(Some((body, first)), move |state| {
        let redactor = redactor.clone();
        async move {
            let (mut body, (wait, reported)) = state?;
            match tokio::time::timeout(wait, body.next()).await {
                Err(_) => Some((Err(LlmError::Stalled { after: reported }), None)),
                Ok(None) => None,
                Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some((body, (idle, idle))))),
                Ok(Some(Err(e))) => {
                    let message = format!(
                        "connection closed mid-stream: {}",
                        error_chain(&e.without_url())
                    );
                    Some((
                        Err(LlmError::Stream {
                            message: redactor.redact(&message),
                        }),
                        None,
                    ))
                }
            }
        }
    })
}

/// How long to wait for trailing chunks (usage, `[DONE]`) once a response is complete.
const GRACE_AFTER_COMPLETE: Duration = Duration::from_secs(5);

type Events = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<LlmError>>> + Send>>;

struct Driver<D> {
    events: Events,
    decoder: Option<D>,
    pending: VecDeque<Result<StreamEvent, LlmError>>,
    redactor: Redactor,
}

/// Serializes `body`, POSTs it to `endpoint`, checks that an event stream came back and drives
/// it through `decoder`: the whole streaming call both providers make.
pub(crate) async fn open<D: Decoder>(
    endpoint: &Endpoint,
    body: &impl serde::Serialize,
    timeouts: Timeouts,
    classify: fn(&HttpFailure) -> Option<LlmError>,
    decoder: D,
) -> Result<EventStream, LlmError> {
    let bytes = serde_json::to_vec(body).map_err(|e| LlmError::BadRequest {
        status: 0,
        message: format!("cannot serialize the request: {e}"),
    })?;
    let started = tokio::time::Instant::now();
    let response = super::http::post(endpoint, bytes, timeouts.first_byte, classify).await?;
    let redactor = endpoint.redactor().clone();
    let response = ensure_event_stream(response, timeouts.idle, &redactor, classify).await?;
    // The first bytes are due within what is left of the first-byte timeout.
    let first = timeouts
        .first_byte
        .saturating_sub(started.elapsed())
        .max(Duration::from_millis(1));
    Ok(drive(
        response,
        (first, timeouts.first_byte),
        timeouts.idle,
        redactor,
        decoder,
    ))
}

/// Streams `response` (an SSE body) through `decoder` into an [`EventStream`]. The stream ends
/// after `Done` or the first error; dropping it closes the connection.
pub(crate) fn drive<D: Decoder>(
    response: reqwest::Response,
    first: (Duration, Duration),
    idle: Duration,
    redactor: Redactor,
    decoder: D,
) -> EventStream {
    let events: Events =
        Box::pin(idle_bytes(response, first, idle, redactor.clone()).eventsource());
    let driver = Driver {
        events,
        decoder: Some(decoder),
        pending: VecDeque::new(),
        redactor,
    };
    Box::pin(futures::stream::unfold(driver, |mut d| async move {
        loop {
            if let Some(item) = d.pending.pop_front() {
                return Some((item, d));
            }
            d.decoder.as_ref()?;
            d.step().await;
        }
    }))
}

impl<D: Decoder> Driver<D> {
    /// Reads one event and queues what it produced; clears the decoder once finished.
    async fn step(&mut self) {
        let Some(decoder) = self.decoder.as_mut() else {
            return;
        };
        let complete = decoder.is_complete();
        let item = if complete {
            tokio::time::timeout(GRACE_AFTER_COMPLETE, self.events.next())
                .await
                .unwrap_or(None)
        } else {
            self.events.next().await
        };
        let outcome = match item {
            None => decoder.finish().map(|r| (Vec::new(), Some(r))),
            Some(Err(_)) if complete => decoder.finish().map(|r| (Vec::new(), Some(r))),
            Some(Err(e)) => Err(sse_error(e)),
            Some(Ok(event)) => {
                let mut out = Vec::new();
                match decoder.event(&event, &mut out) {
                    Ok(true) => decoder.finish().map(|r| (out, Some(r))),
                    Ok(false) => Ok((out, None)),
                    Err(e) => Err(e),
                }
            }
        };
        match outcome {
            Ok((out, done)) => {
                self.pending.extend(out.into_iter().map(Ok));
                if let Some(response) = done {
                    self.pending.push_back(Ok(StreamEvent::Done(response)));
                    self.finished();
                }
            }
            Err(e) => {
                let e = e.redacted(&self.redactor);
                tracing::debug!(error = %e, "model stream failed");
                self.pending.push_back(Err(e));
                self.finished();
            }
        }
    }

    /// Stops reading: drops the decoder and the body (closing the connection).
    fn finished(&mut self) {
        self.decoder = None;
        self.events = Box::pin(futures::stream::empty());
    }
}

fn sse_error(e: EventStreamError<LlmError>) -> LlmError {
    match e {
        EventStreamError::Transport(e) => e,
        EventStreamError::Utf8(e) => LlmError::Stream {
            message: format!("stream is not UTF-8: {e}"),
        },
        EventStreamError::Parser(e) => LlmError::Stream {
            message: format!("malformed server-sent event: {e}"),
        },
    }
}

/// Parses an event's JSON data; malformed JSON is a stream error.
pub(crate) fn json_data(event: &Event) -> Result<serde_json::Value, LlmError> {
    serde_json::from_str(&event.data).map_err(|e| LlmError::Stream {
        message: format!(
            "malformed JSON in `{}` event: {e}",
            if event.event.is_empty() {
                "message"
            } else {
                &event.event
            }
        ),
    })
}
