//! The Memory page's view of memory consolidation: the "show set-aside" filter's checkbox, a
//! set-aside memory's row (marked, with why and the memory that replaced it, no actions: it is
//! out of recall), and `POST /memory/undo`, which undoes the newest consolidation run
//! (`UndoConsolidation` with run 0) and shows what came back.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;

use super::{refused, unreachable};
use crate::html::{csrf_field, escape};
use crate::state::Web;
use crate::texts::Texts;

/// The filter's checkbox (`aside=1`).
pub(super) fn checkbox(t: Texts, checked: bool) -> String {
    let checked = if checked { " checked" } else { "" };
    format!(
        "<label><input type=\"checkbox\" name=\"aside\" value=\"1\" id=\"memory-aside\"{checked}> {}</label> ",
        escape(t.aside_show())
    )
}

/// A set-aside memory: its text (escaped), day, and why it is set aside.
pub(super) fn row(t: Texts, m: &pb::MemoryInfo) -> String {
    format!(
        "<tr class=\"memory set-aside\" data-id=\"{id}\"><td class=\"memory-text\"><s>{text}</s></td>\
         <td>{date}</td><td class=\"memory-aside\" colspan=\"2\"><mark>{why}</mark></td></tr>",
        id = m.id,
        text = escape(&m.text),
        date = escape(&m.date),
        why = escape(&t.aside_reason(&m.superseded_reason, m.superseded_by)),
    )
}

/// The undo button and, after an undo (`undone`: the memories restored, or "none"), its result.
pub(super) fn undo(t: Texts, csrf: &str, undone: &str) -> String {
    let result = match undone {
        "" => String::new(),
        "none" => format!("<p id=\"memory-undone\">{}</p>", escape(t.undo_nothing())),
        n => format!(
            "<p id=\"memory-undone\">{}{}</p>",
            escape(t.undo_done()),
            n.parse::<u32>().unwrap_or(0)
        ),
    };
    format!(
        "<form class=\"inline\" method=\"post\" action=\"/memory/undo\">{}\
         <button type=\"submit\" id=\"memory-undo\">{}</button></form>{result}",
        csrf_field(csrf),
        escape(t.undo_run()),
    )
}

/// `POST /memory/undo`: undoes the newest consolidation run, back to the set-aside view.
pub(crate) async fn undo_latest(State(web): State<Web>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::UndoConsolidationRequest { run_id: 0 };
    match client.undo_consolidation(request).await {
        Ok(reply) => {
            let reply = reply.into_inner();
            let undone = if reply.undone {
                reply.restored.to_string()
            } else {
                "none".to_owned()
            };
            Redirect::to(&format!("/memory?aside=1&undone={undone}")).into_response()
        }
        Err(status) => refused(&web, &status),
    }
}
