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

/// What an undo did, carried back to the Memory page in its `undone` parameter: the number of
/// memories restored, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Undone {
    /// There was no run to undo.
    Nothing,
    /// The run was undone; this many memories are back.
    Restored(u32),
}

impl Undone {
    const NOTHING: &'static str = "none";

    fn of(reply: &pb::UndoConsolidationResponse) -> Self {
        if reply.undone {
            Undone::Restored(reply.restored)
        } else {
            Undone::Nothing
        }
    }

    /// The parameter's value.
    fn param(self) -> String {
        match self {
            Undone::Nothing => Self::NOTHING.to_owned(),
            Undone::Restored(n) => n.to_string(),
        }
    }

    /// The parameter read back; `None` when there was no undo (empty or not ours).
    fn parse(param: &str) -> Option<Self> {
        if param == Self::NOTHING {
            return Some(Undone::Nothing);
        }
        param.parse().ok().map(Undone::Restored)
    }
}

/// The undo button and, after an undo (`undone`: the memories restored, or "none"), its result.
pub(super) fn undo(t: Texts, csrf: &str, undone: &str) -> String {
    let result = match Undone::parse(undone) {
        None => String::new(),
        Some(Undone::Nothing) => {
            format!("<p id=\"memory-undone\">{}</p>", escape(t.undo_nothing()))
        }
        Some(Undone::Restored(n)) => {
            format!("<p id=\"memory-undone\">{}{n}</p>", escape(t.undo_done()))
        }
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
            let undone = Undone::of(reply.get_ref()).param();
            Redirect::to(&format!("/memory?aside=1&undone={undone}")).into_response()
        }
        Err(status) => refused(&web, &status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_undo_result_reads_back_as_itself() {
        for undone in [Undone::Nothing, Undone::Restored(0), Undone::Restored(3)] {
            assert_eq!(Undone::parse(&undone.param()), Some(undone));
        }
        assert_eq!(Undone::parse(""), None);
        assert_eq!(Undone::parse("<b>"), None);
    }
}
