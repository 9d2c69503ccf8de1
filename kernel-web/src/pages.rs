//! The console's pages, one module each; every handler runs behind `auth::require` and turns
//! agentd's refusals into [`refused`].

pub(crate) mod chart;
pub(crate) mod chat;
pub(crate) mod chat_events;
pub(crate) mod chat_living;
pub(crate) mod chat_page;
pub(crate) mod chat_upload;
pub(crate) mod history;
pub(crate) mod memory;
pub(crate) mod memory_aside;
pub(crate) mod notes;
pub(crate) mod schedules;
pub(crate) mod sessions;
pub(crate) mod skills;
pub(crate) mod status;
pub(crate) mod usage;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::html;
use crate::state::Web;

/// A page saying agentd refused (its message, escaped) or could not be reached.
pub(crate) fn refused(web: &Web, status: &tonic::Status) -> Response {
    let t = web.texts;
    if kernel_common::agentd_client::is_transport_failure(status) {
        web.agentd.lost();
        return (StatusCode::SERVICE_UNAVAILABLE, t.agentd_unreachable()).into_response();
    }
    (
        StatusCode::BAD_REQUEST,
        format!("{}{}", t.refused(), status.message()),
    )
        .into_response()
}

/// Agentd could not be reached at all.
pub(crate) fn unreachable(web: &Web) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        web.texts.agentd_unreachable(),
    )
        .into_response()
}

/// `<h1>` + `body` in the shell.
pub(crate) fn shell(web: &Web, csrf: &str, title: &str, body: &str) -> Response {
    let body = format!("<h1>{}</h1>{body}", html::escape(title));
    html::page(web.texts, title, csrf, &body).into_response()
}
