//! Chat's calls (the page is `chat_page`; `assets/kernel.js` streams): `POST /api/chat` (the
//! `Chat` stream as NDJSON lines, see `chat_events`; in the session the page shows, so two tabs
//! on two sessions run side by side), `POST /api/stop` (`Cancel`, that session's turn), `POST /api/answer` (`Answer`, a question's button) and `POST /api/approve`
//! (`Approve`, an approval's button).

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use kernel_proto::v1 as pb;
use serde::Deserialize;
use serde_json::json;

use super::chat_events::line_of;
use super::{refused, unreachable};
use crate::state::Web;

/// Largest message accepted from the page (agentd has its own limit too).
pub(crate) const MAX_TEXT: usize = 64 * 1024;

#[derive(Deserialize)]
pub(crate) struct SendBody {
    text: String,
    /// The session the page shows (the turn runs in it, beside other sessions' turns); unset:
    /// the current session.
    #[serde(default)]
    session: Option<i64>,
}

/// `POST /api/chat`: streams the turn as NDJSON.
pub(crate) async fn send(State(web): State<Web>, Json(body): Json<SendBody>) -> Response {
    if body.text.trim().is_empty() || body.text.len() > MAX_TEXT {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    }
    let request = pb::ChatRequest {
        text: body.text,
        session_id: body.session,
        ..Default::default()
    };
    stream_turn(&web, request).await
}

/// Starts the turn `request` and streams it to the page as NDJSON.
pub(crate) async fn stream_turn(web: &Web, request: pb::ChatRequest) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(web);
    };
    let stream = match client.chat(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(web, &status),
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
                let said = kernel_proto::refusal::of(&status).and_then(|r| t.said().refusal(&r));
                let text = match said {
                    Some(html) => kernel_common::said::plain(&html),
                    None => format!("{}{}", t.chat_failed(), status.message()),
                };
                Some(json!({"t": "end", "state": "failed", "text": text}))
            }
        };
        futures::future::ready(line.map(|l| Ok::<_, std::convert::Infallible>(format!("{l}\n"))))
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8")],
        Body::from_stream(lines),
    )
        .into_response()
}

#[derive(Deserialize, Default)]
pub(crate) struct StopBody {
    /// The session whose turn to stop; unset: every running turn.
    #[serde(default)]
    session: Option<i64>,
}

/// `POST /api/stop`: cancels the running turn (of the page's session).
pub(crate) async fn stop(State(web): State<Web>, body: Option<Json<StopBody>>) -> Response {
    let Json(body) = body.unwrap_or_default();
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::CancelRequest {
        session_id: body.session,
        ..Default::default()
    };
    match client.cancel(request).await {
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

#[derive(Deserialize)]
pub(crate) struct ApproveBody {
    id: String,
    decision: String,
}

/// `POST /api/approve`: answers an approval (`once`, `session` or `deny`).
pub(crate) async fn approve(State(web): State<Web>, Json(body): Json<ApproveBody>) -> Response {
    let decision = match body.decision.as_str() {
        "once" => pb::ApprovalDecision::AllowOnce,
        "session" => pb::ApprovalDecision::AllowSession,
        "deny" => pb::ApprovalDecision::Deny,
        _ => return StatusCode::UNPROCESSABLE_ENTITY.into_response(),
    };
    if body.id.is_empty() || body.id.len() > 128 {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    }
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::ApproveRequest {
        approval_id: body.id,
        decision: decision.into(),
    };
    match client.approve(request).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(status) => refused(&web, &status),
    }
}
