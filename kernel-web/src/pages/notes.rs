//! Notes: `GET /notes[?date=YYYY-MM-DD]` shows a day's daily note (`GetNotes`; today by
//! default), its Markdown through kernel-render's rules, with a date picker and links to the
//! day before and after.

use axum::Extension;
use axum::extract::{Query, State};
use axum::response::Response;
use kernel_proto::v1 as pb;
use serde::Deserialize;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{escape, markdown};
use crate::state::Web;

#[derive(Deserialize)]
pub(crate) struct NotesQuery {
    date: Option<String>,
}

/// `GET /notes[?date=…]`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<NotesQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let date = query.date.unwrap_or_default().trim().to_owned();
    let notes = match client.get_notes(pb::GetNotesRequest { date }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let mut body = format!(
        "<form method=\"get\" action=\"/notes\"><input type=\"date\" name=\"date\" id=\"notes-date\" \
         value=\"{date}\"> <button type=\"submit\" id=\"notes-show\">{show}</button>{around}</form>",
        date = escape(&notes.date),
        show = escape(t.notes_show()),
        around = around(&notes.date),
    );
    match notes.text.as_deref() {
        Some(text) if !text.trim().is_empty() => {
            body.push_str(&format!(
                "<div id=\"note\" class=\"msg\">{}</div>",
                markdown(text)
            ));
        }
        _ => body.push_str(&format!(
            "<p id=\"note-none\">{}</p>",
            escape(t.notes_none())
        )),
    }
    shell(&web, &csrf, t.nav_notes(), &body)
}

/// Links to the day before and the day after `date`.
fn around(date: &str) -> String {
    let Ok(day) = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d") else {
        return String::new();
    };
    let link = |d: Option<chrono::NaiveDate>, arrow: &str| {
        d.map(|d| {
            format!(
                " <a href=\"/notes?date={0}\">{arrow} {0}</a>",
                d.format("%Y-%m-%d")
            )
        })
        .unwrap_or_default()
    };
    format!("{}{}", link(day.pred_opt(), "←"), link(day.succ_opt(), "→"))
}
