//! Sessions: `GET /sessions[?q=…]` lists them (`ListSessions`) or, with a query, finds them by
//! title or content (`SearchSessions`), each with Open, Resume, Rename and Delete;
//! `POST /sessions/resume`, `/sessions/rename` and `/sessions/delete` act on a number of that
//! listing. The history page itself is `history`.

use axum::Extension;
use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use serde::Deserialize;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{csrf_field, escape};
use crate::state::Web;
use crate::texts::Texts;

#[derive(Deserialize)]
pub(crate) struct SessionsQuery {
    q: Option<String>,
}

/// `GET /sessions[?q=…]`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<SessionsQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let q = query.q.unwrap_or_default();
    let q = q.trim();
    let listed = if q.is_empty() {
        client
            .list_sessions(pb::ListSessionsRequest {})
            .await
            .map(|r| r.into_inner().sessions)
    } else {
        client
            .search_sessions(pb::SearchSessionsRequest {
                query: q.to_owned(),
            })
            .await
            .map(|r| r.into_inner().sessions)
    };
    let sessions = match listed {
        Ok(sessions) => sessions,
        Err(status) => return refused(&web, &status),
    };
    let mut body = format!(
        "<form method=\"get\" action=\"/sessions\"><input type=\"search\" name=\"q\" \
         id=\"sessions-q\" value=\"{}\" placeholder=\"{}\" maxlength=\"200\"> \
         <button type=\"submit\" id=\"sessions-search\">{}</button></form>",
        escape(q),
        escape(t.sessions_query()),
        escape(t.sessions_search())
    );
    if !q.is_empty() {
        body.push_str(&format!(
            "<p>{} {}</p>",
            sessions.len(),
            escape(t.sessions_found())
        ));
    }
    if sessions.is_empty() && q.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.sessions_none())));
    } else {
        body.push_str("<table id=\"sessions\">");
        for s in &sessions {
            body.push_str(&row(t, &csrf, s));
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_sessions(), &body)
}

/// One session's row: its title (a link to its history) and, when it is in the latest
/// listing, its actions.
fn row(t: Texts, csrf: &str, s: &pb::SessionInfo) -> String {
    let current = if s.current {
        format!(" <em>({})</em>", escape(t.sessions_current()))
    } else {
        String::new()
    };
    let title = if s.title.is_empty() {
        t.sessions_untitled()
    } else {
        s.title.as_str()
    };
    let actions = if s.number == 0 {
        String::new()
    } else {
        let action = |path: &str, label: &str| {
            format!(
                "<form class=\"inline\" method=\"post\" action=\"/sessions/{path}\">{}\
                 <input type=\"hidden\" name=\"number\" value=\"{}\">\
                 <button type=\"submit\" class=\"{path}\">{}</button></form>",
                csrf_field(csrf),
                s.number,
                escape(label)
            )
        };
        format!(
            "{} {} <form class=\"inline\" method=\"post\" action=\"/sessions/rename\">{}\
             <input type=\"hidden\" name=\"number\" value=\"{}\">\
             <input type=\"text\" name=\"title\" class=\"title\" maxlength=\"100\" required \
             value=\"{}\"> <button type=\"submit\" class=\"rename\">{}</button></form>",
            action("resume", t.sessions_resume()),
            action("delete", t.sessions_delete()),
            csrf_field(csrf),
            s.number,
            escape(&s.title),
            escape(t.sessions_rename()),
        )
    };
    let number = if s.number == 0 {
        String::new()
    } else {
        format!("#{}", s.number)
    };
    format!(
        "<tr class=\"session\" data-id=\"{id}\"><td>{number}</td><td><a class=\"open\" \
         href=\"/sessions/{id}\">{title}</a>{current}</td><td>{date}</td><td>{actions}</td></tr>",
        id = s.id,
        title = escape(title),
        date = escape(&s.date),
    )
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
        thread_id: None,
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

#[derive(Deserialize)]
pub(crate) struct RenameForm {
    number: u32,
    title: String,
}

/// `POST /sessions/rename`: the owner's own title (agentd checks it).
pub(crate) async fn rename(State(web): State<Web>, Form(form): Form<RenameForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::RenameSessionRequest {
        number: Some(form.number),
        title: form.title,
    };
    match client.rename_session(request).await {
        Ok(_) => Redirect::to("/sessions").into_response(),
        Err(status) => refused(&web, &status),
    }
}
