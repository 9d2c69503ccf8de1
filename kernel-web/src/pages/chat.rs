//! Chat: the page (a log and a form; `assets/kernel.js` streams), `POST /api/chat` (the `Chat`
//! stream as NDJSON lines: `delta`, `tool`, `question`, then `done` with the answer rendered
//! through kernel-render, or `end` with a failure/cancel/busy text), `POST /api/stop`
//! (`Cancel`) and `POST /api/answer` (`Answer`, a question's button).

use axum::Extension;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use kernel_proto::v1::{self as pb, chat_event::Event};
use serde::Deserialize;
use serde_json::json;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html;
use crate::state::Web;
use crate::texts::Texts;

/// Largest message accepted from the page (agentd has its own limit too).
const MAX_TEXT: usize = 64 * 1024;

/// `GET /chat`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
) -> Response {
    let t = web.texts;
    let body = format!(
        "<div id=\"chat-log\"></div>\
         <form id=\"chat-form\"><textarea id=\"chat-text\" name=\"text\" placeholder=\"{ph}\"></textarea>\
         <button type=\"submit\" id=\"chat-send\">{send}</button> \
         <button type=\"button\" id=\"chat-stop\">{stop}</button></form>",
        ph = html::escape(t.chat_placeholder()),
        send = html::escape(t.chat_send()),
        stop = html::escape(t.chat_stop()),
    );
    shell(&web, &csrf, t.nav_chat(), &body)
}

#[derive(Deserialize)]
pub(crate) struct SendBody {
    text: String,
}

/// `POST /api/chat`: streams the turn as NDJSON.
pub(crate) async fn send(State(web): State<Web>, Json(body): Json<SendBody>) -> Response {
    if body.text.trim().is_empty() || body.text.len() > MAX_TEXT {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    }
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::ChatRequest {
        text: body.text,
        ..Default::default()
    };
    let stream = match client.chat(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let t = web.texts;
    let agentd = web.agentd.clone();
    let lines = stream.filter_map(move |event| {
        let line = match event {
            Ok(event) => event.event.and_then(|e| line_of(t, e)),
            Err(status) => {
                if kernel_common::agentd_client::is_transport_failure(&status) {
                    agentd.lost();
                }
                Some(json!({"t": "end", "state": "failed", "text": format!("{}{}", t.chat_failed(), status.message())}))
            }
        };
        futures::future::ready(
            line.map(|l| Ok::<_, std::convert::Infallible>(format!("{l}\n"))),
        )
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8")],
        Body::from_stream(lines),
    )
        .into_response()
}

/// One event as an NDJSON object (none for the events the page does not show).
fn line_of(t: Texts, event: Event) -> Option<serde_json::Value> {
    Some(match event {
        Event::TextDelta(d) => json!({"t": "delta", "text": d.text}),
        Event::ToolStarted(s) => {
            json!({"t": "tool", "text": format!("{} {}", s.tool_name, s.input_summary)})
        }
        Event::CliStarted(c) => json!({"t": "tool", "text": c.cli}),
        Event::Question(q) => {
            json!({"t": "question", "id": q.question_id, "text": q.text, "options": q.options})
        }
        Event::Completed(c) => json!({"t": "done", "html": html::markdown(&c.text)}),
        Event::Failed(f) => {
            json!({"t": "end", "state": "failed", "text": format!("{}{}", t.chat_failed(), f.message)})
        }
        Event::Cancelled(_) => {
            json!({"t": "end", "state": "cancelled", "text": t.chat_cancelled()})
        }
        Event::Busy(_) => json!({"t": "end", "state": "busy", "text": t.chat_busy()}),
        _ => return None,
    })
}

/// `POST /api/stop`: cancels the running turn.
pub(crate) async fn stop(State(web): State<Web>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    match client.cancel(pb::CancelRequest::default()).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(status) => refused(&web, &status),
    }
}

#[derive(Deserialize)]
pub(crate) struct AnswerBody {
    id: String,
    option: u32,
}

/// `POST /api/answer`: answers a question with one of its options.
pub(crate) async fn answer(State(web): State<Web>, Json(body): Json<AnswerBody>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::AnswerRequest {
        question_id: body.id,
        option: Some(body.option),
        text: String::new(),
    };
    match client.answer(request).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(status) => refused(&web, &status),
    }
}
