//! Sessions: `GET /sessions` lists them (`ListSessions`), each with Resume and Delete;
//! `POST /sessions/resume` and `/sessions/delete` act on a number of that listing.

use axum::Extension;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use serde::Deserialize;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{csrf_field, escape};
use crate::state::Web;

/// `GET /sessions`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let sessions = match client.list_sessions(pb::ListSessionsRequest {}).await {
        Ok(reply) => reply.into_inner().sessions,
        Err(status) => return refused(&web, &status),
    };
    let mut body = String::new();
    if sessions.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.sessions_none())));
    } else {
        body.push_str("<table id=\"sessions\">");
        for s in &sessions {
            let current = if s.current {
                format!(" <em>({})</em>", escape(t.sessions_current()))
            } else {
                String::new()
            };
            let action = |path: &str, label: &str| {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/sessions/{path}\">{}\
                     <input type=\"hidden\" name=\"number\" value=\"{}\">\
                     <button type=\"submit\">{}</button></form>",
                    csrf_field(&csrf),
                    s.number,
                    escape(label)
                )
            };
            body.push_str(&format!(
                "<tr class=\"session\"><td>#{}</td><td>{}{current}</td><td>{}</td><td>{} {}</td></tr>",
                s.number,
                escape(&s.title),
                escape(&s.date),
                action("resume", t.sessions_resume()),
                action("delete", t.sessions_delete()),
            ));
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_sessions(), &body)
}

#[derive(Deserialize)]
pub(crate) struct NumberForm {
    number: u32,
}

/// `POST /sessions/resume`.
pub(crate) async fn resume(State(web): State<Web>, Form(form): Form<NumberForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::ResumeSessionRequest {
        number: form.number,
    };
    match client.resume_session(request).await {
        Ok(_) => Redirect::to("/chat").into_response(),
        Err(status) => refused(&web, &status),
    }
}

/// `POST /sessions/delete`.
pub(crate) async fn delete(State(web): State<Web>, Form(form): Form<NumberForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::DeleteSessionsRequest {
        numbers: vec![form.number],
    };
    match client.delete_sessions(request).await {
        Ok(_) => Redirect::to("/sessions").into_response(),
        Err(status) => refused(&web, &status),
    }
}
