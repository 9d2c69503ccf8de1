//! Memory: `GET /memory` browses the memories (`BrowseMemories`: by source and local creation
//! day, 50 a page, newest first) or, with `?q=`, searches them (`SearchMemories`, hybrid when
//! embeddings are on); each with Forget and Edit. `POST /memory/forget` forgets one by its id
//! (`DeleteMemories.ids`: no dependence on agentd's latest numbered listing, which Telegram's
//! /memory also sets); `POST /memory/edit` replaces one's text (`EditMemory`, which checks it).
//! Every memory's text is escaped: a memory holding markup shows it as text.
//! With `aside=1` ("show set-aside") the memories consolidation set aside are listed too
//! (`BrowseMemories.include_superseded`), marked, with why and what replaced them
//! ([`super::memory_aside`]); hidden by default.

use axum::Extension;
use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use kernel_proto::words::MemorySource;
use serde::Deserialize;

use super::{memory_aside, refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{self, csrf_field, escape};
use crate::state::Web;
use crate::texts::Texts;

/// Most results a search shows.
const SEARCH_LIMIT: u32 = 50;

#[derive(Deserialize, Default)]
pub(crate) struct MemoryQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    page: u32,
    /// "1": also the memories consolidation set aside.
    #[serde(default)]
    aside: String,
    /// After an undo: the memories restored, or "none".
    #[serde(default)]
    undone: String,
}

impl MemoryQuery {
    /// This view's query string (to come back to it after an action).
    fn back(&self) -> String {
        let pairs = [
            ("q", self.q.trim().to_owned()),
            ("source", self.source.clone()),
            ("from", self.from.clone()),
            ("to", self.to.clone()),
            ("page", self.page.to_string()),
            ("aside", self.aside.clone()),
        ];
        let query: Vec<String> = pairs
            .iter()
            .filter(|(_, v)| !v.is_empty() && v != "0")
            .map(|(k, v)| format!("{k}={}", html::url_encode(v)))
            .collect();
        if query.is_empty() {
            "/memory".to_owned()
        } else {
            format!("/memory?{}", query.join("&"))
        }
    }
}

/// `GET /memory[?q=…|?source=…&from=…&to=…&page=…]`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<MemoryQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let q = query.q.trim();
    let (memories, pager) = if q.is_empty() {
        let request = pb::BrowseMemoriesRequest {
            source: query.source.clone(),
            from: query.from.clone(),
            to: query.to.clone(),
            page: query.page,
            include_superseded: query.aside == "1",
        };
        match client.browse_memories(request).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                let pager = pager(t, &query, &reply);
                (reply.memories, pager)
            }
            Err(status) => return refused(&web, &status),
        }
    } else {
        let request = pb::SearchMemoriesRequest {
            query: q.to_owned(),
            limit: SEARCH_LIMIT,
            numbered: false,
        };
        match client.search_memories(request).await {
            Ok(reply) => {
                let memories = reply.into_inner().memories;
                let count = format!("<p>{} {}</p>", memories.len(), escape(t.memory_total()));
                (memories, count)
            }
            Err(status) => return refused(&web, &status),
        }
    };
    let mut body = format!(
        "<form method=\"get\" action=\"/memory\"><input type=\"search\" name=\"q\" id=\"memory-q\" \
         value=\"{}\" placeholder=\"{}\"> <button type=\"submit\" id=\"memory-search\">{}</button></form>",
        escape(q),
        escape(t.memory_query()),
        escape(t.memory_search())
    );
    body.push_str(&filters(t, &query));
    body.push_str(&memory_aside::undo(t, &csrf, &query.undone));
    body.push_str(&pager);
    if memories.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.memory_none())));
    } else {
        let back = query.back();
        body.push_str("<table id=\"memories\">");
        for m in &memories {
            if m.superseded {
                body.push_str(&memory_aside::row(t, m));
            } else {
                body.push_str(&row(t, &csrf, &back, m));
            }
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_memory(), &body)
}

/// The browse filters: source and local creation days.
fn filters(t: Texts, query: &MemoryQuery) -> String {
    let sources = std::iter::once(None).chain(MemorySource::ALL.iter().copied().map(Some));
    let options = sources
        .map(|source| {
            let value = source.map_or("", MemorySource::as_str);
            let label = t.memory_source_label(source);
            let selected = if value == query.source {
                " selected"
            } else {
                ""
            };
            format!(
                "<option value=\"{value}\"{selected}>{}</option>",
                escape(label)
            )
        })
        .collect::<String>();
    format!(
        "<form method=\"get\" action=\"/memory\" id=\"memory-filters\">{source} \
         <select name=\"source\" id=\"memory-source\">{options}</select> {from} \
         <input type=\"date\" name=\"from\" id=\"memory-from\" value=\"{from_v}\"> {to} \
         <input type=\"date\" name=\"to\" id=\"memory-to\" value=\"{to_v}\"> {aside}\
         <button type=\"submit\" id=\"memory-filter\">{filter}</button></form>",
        source = escape(t.memory_source()),
        from = escape(t.memory_from()),
        from_v = escape(&query.from),
        to = escape(t.memory_to()),
        to_v = escape(&query.to),
        aside = memory_aside::checkbox(t, query.aside == "1"),
        filter = escape(t.memory_filter()),
    )
}

/// "N memories · page p/P" and the links to the pages around.
fn pager(t: Texts, query: &MemoryQuery, reply: &pb::BrowseMemoriesResponse) -> String {
    let link = |page: u32, label: &str| {
        let at = MemoryQuery {
            q: String::new(),
            source: query.source.clone(),
            from: query.from.clone(),
            to: query.to.clone(),
            page,
            aside: query.aside.clone(),
            undone: String::new(),
        };
        format!(" <a href=\"{}\">{}</a>", escape(&at.back()), escape(label))
    };
    let mut html = format!(
        "<p id=\"memory-pager\">{} {}",
        reply.total,
        escape(t.memory_total())
    );
    if reply.pages > 1 {
        html.push_str(&format!(
            " · {} {}/{}",
            escape(t.memory_page()),
            reply.page,
            reply.pages
        ));
        if reply.page > 1 {
            html.push_str(&link(reply.page - 1, t.memory_prev()));
        }
        if reply.page < reply.pages {
            html.push_str(&link(reply.page + 1, t.memory_next()));
        }
    }
    html.push_str("</p>");
    html
}

/// One memory: its text, day, source, Forget, and Edit (a form folded in `<details>`).
fn row(t: Texts, csrf: &str, back: &str, m: &pb::MemoryInfo) -> String {
    let source = if !m.origin.is_empty() {
        format!("{} ({})", t.memory_source_outside(), m.origin)
    } else if m.auto {
        t.memory_source_auto().to_owned()
    } else {
        t.memory_source_owner().to_owned()
    };
    format!(
        "<tr class=\"memory\" data-id=\"{id}\"><td class=\"memory-text\">{text}</td><td>{date}</td>\
         <td class=\"memory-source\">{source}</td>\
         <td><form class=\"inline\" method=\"post\" action=\"/memory/forget\">{csrf}\
         <input type=\"hidden\" name=\"id\" value=\"{id}\">\
         <input type=\"hidden\" name=\"back\" value=\"{back}\">\
         <button type=\"submit\" class=\"forget\">{forget}</button></form>\
         <details class=\"edit\"><summary>{edit}</summary>\
         <form method=\"post\" action=\"/memory/edit\">{csrf}\
         <input type=\"hidden\" name=\"id\" value=\"{id}\">\
         <input type=\"hidden\" name=\"back\" value=\"{back}\">\
         <textarea name=\"text\" required maxlength=\"10000\">{text}</textarea>\
         <button type=\"submit\" class=\"save\">{save}</button></form></details></td></tr>",
        id = m.id,
        text = escape(&m.text),
        date = escape(&m.date),
        source = escape(&source),
        csrf = csrf_field(csrf),
        back = escape(back),
        forget = escape(t.memory_forget()),
        edit = escape(t.memory_edit()),
        save = escape(t.memory_save()),
    )
}

/// Where to go after an action: the view it came from (only a `/memory` path of ours).
fn back_to(back: &str) -> String {
    if back == "/memory" || back.starts_with("/memory?") {
        back.to_owned()
    } else {
        "/memory".to_owned()
    }
}

#[derive(Deserialize)]
pub(crate) struct ForgetForm {
    id: i64,
    #[serde(default)]
    q: String,
    #[serde(default)]
    back: String,
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
    let back = if !form.back.is_empty() {
        back_to(&form.back)
    } else if form.q.trim().is_empty() {
        "/memory".to_owned()
    } else {
        format!("/memory?q={}", html::url_encode(form.q.trim()))
    };
    Redirect::to(&back).into_response()
}

#[derive(Deserialize)]
pub(crate) struct EditForm {
    id: i64,
    text: String,
    #[serde(default)]
    back: String,
}

/// `POST /memory/edit`: agentd checks the text (empty or too long: refused, nothing changed).
pub(crate) async fn edit(State(web): State<Web>, Form(form): Form<EditForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::EditMemoryRequest {
        id: form.id,
        text: form.text,
    };
    match client.edit_memory(request).await {
        Ok(_) => Redirect::to(&back_to(&form.back)).into_response(),
        Err(status) => refused(&web, &status),
    }
}
