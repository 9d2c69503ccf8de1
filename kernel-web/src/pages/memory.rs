//! Memory: `GET /memory` lists (or, with `?q=`, searches) the memories, each with a Forget
//! button; `POST /memory/forget` forgets one by its id (`DeleteMemories.ids`: no dependence on
//! agentd's latest numbered listing, which Telegram's /memory also sets).
//! Every memory's text is escaped: a memory holding markup shows it as text.

use axum::Extension;
use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use serde::Deserialize;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{self, csrf_field, escape};
use crate::state::Web;

/// Most results a search shows.
const SEARCH_LIMIT: u32 = 50;

#[derive(Deserialize)]
pub(crate) struct MemoryQuery {
    q: Option<String>,
}

/// `GET /memory[?q=…]`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<MemoryQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let q = query.q.unwrap_or_default();
    let q = q.trim();
    let listed = if q.is_empty() {
        client
            .list_memories(pb::ListMemoriesRequest {})
            .await
            .map(|r| r.into_inner().memories)
    } else {
        client
            .search_memories(pb::SearchMemoriesRequest {
                query: q.to_owned(),
                limit: SEARCH_LIMIT,
                numbered: false,
            })
            .await
            .map(|r| r.into_inner().memories)
    };
    let memories = match listed {
        Ok(memories) => memories,
        Err(status) => return refused(&web, &status),
    };
    let mut body = format!(
        "<form method=\"get\" action=\"/memory\"><input type=\"search\" name=\"q\" id=\"memory-q\" \
         value=\"{}\" placeholder=\"{}\"> <button type=\"submit\" id=\"memory-search\">{}</button></form>",
        escape(q),
        escape(t.memory_query()),
        escape(t.memory_search())
    );
    if memories.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.memory_none())));
    } else {
        body.push_str(&format!(
            "<p>{} {}</p><table id=\"memories\">",
            memories.len(),
            escape(t.memory_total())
        ));
        for m in &memories {
            body.push_str(&format!(
                "<tr class=\"memory\"><td class=\"memory-text\">{text}</td><td>{date}</td>\
                 <td><form class=\"inline\" method=\"post\" action=\"/memory/forget\">{csrf}\
                 <input type=\"hidden\" name=\"id\" value=\"{id}\">\
                 <input type=\"hidden\" name=\"q\" value=\"{q}\">\
                 <button type=\"submit\" class=\"forget\">{forget}</button></form></td></tr>",
                id = m.id,
                text = escape(&m.text),
                date = escape(&m.date),
                csrf = csrf_field(&csrf),
                q = escape(q),
                forget = escape(t.memory_forget()),
            ));
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_memory(), &body)
}

#[derive(Deserialize)]
pub(crate) struct ForgetForm {
    id: i64,
    #[serde(default)]
    q: String,
}

/// `POST /memory/forget`.
pub(crate) async fn forget(State(web): State<Web>, Form(form): Form<ForgetForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::DeleteMemoriesRequest {
        ids: vec![form.id],
        ..Default::default()
    };
    if let Err(status) = client.delete_memories(request).await {
        return refused(&web, &status);
    }
    let back = if form.q.trim().is_empty() {
        "/memory".to_owned()
    } else {
        format!("/memory?q={}", html::url_encode(form.q.trim()))
    };
    Redirect::to(&back).into_response()
}
