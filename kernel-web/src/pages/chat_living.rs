//! Retry and edit from the chat (agentd's living-messages RPCs): `POST /api/retry` runs the
//! session's last owner message again (`Retry`), `POST /api/edit` answers the owner's edited
//! last message (`EditMessage` with `run`), and `GET /api/turn` says whether a turn still runs
//! (`GetStatus`), which the script polls before showing the new answer.

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kernel_proto::v1 as pb;
use serde::Deserialize;
use serde_json::json;

use super::chat::MAX_TEXT;
use super::{refused, unreachable};
use crate::state::Web;

#[derive(Deserialize)]
pub(crate) struct RetryBody {
    session: Option<i64>,
}

/// `POST /api/retry`: `{"started": true}`, or `{"busy": text}` while another turn runs.
pub(crate) async fn retry(State(web): State<Web>, Json(body): Json<RetryBody>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::RetryRequest {
        session_id: body.session,
        ..Default::default()
    };
    match client.retry(request).await {
        Ok(reply) if reply.get_ref().busy => {
            Json(json!({"busy": web.texts.chat_busy()})).into_response()
        }
        Ok(_) => Json(json!({"started": true})).into_response(),
        Err(status) => refused(&web, &status),
    }
}

#[derive(Deserialize)]
pub(crate) struct EditBody {
    session: Option<i64>,
    text: String,
}

/// `POST /api/edit`: the owner's last message edited and answered again; as `retry`.
pub(crate) async fn edit(State(web): State<Web>, Json(body): Json<EditBody>) -> Response {
    if body.text.trim().is_empty() || body.text.len() > MAX_TEXT {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    }
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::EditMessageRequest {
        session_id: body.session,
        text: body.text,
        run: true,
        ..Default::default()
    };
    use pb::edit_message_response::Outcome;
    match client.edit_message(request).await {
        Ok(reply) if reply.get_ref().outcome() == Outcome::Busy => {
            Json(json!({"busy": web.texts.chat_busy()})).into_response()
        }
        Ok(_) => Json(json!({"started": true})).into_response(),
        Err(status) => refused(&web, &status),
    }
}

#[derive(Deserialize)]
pub(crate) struct TurnQuery {
    session: Option<i64>,
}

/// `GET /api/turn[?session=ID]`: `{"running": bool}` (a turn of that session; unset: any).
pub(crate) async fn turn(State(web): State<Web>, Query(query): Query<TurnQuery>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    match client.get_status(pb::GetStatusRequest::default()).await {
        Ok(reply) => {
            let status = reply.get_ref();
            let running = match query.session {
                Some(id) => status.running_turns.iter().any(|r| r.session_id == id),
                None => status.running_turn.is_some(),
            };
            Json(json!({ "running": running })).into_response()
        }
        Err(status) => refused(&web, &status),
    }
}
