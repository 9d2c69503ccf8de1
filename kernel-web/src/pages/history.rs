//! A session's history: `GET /sessions/{id}` shows every message of the session
//! (`GetSessionHistory`) in order — the owner's words escaped as they were typed, the
//! assistant's Markdown through kernel-render's rules (escaped, raw HTML never passed
//! through), the tools each answer called and the owner's feedback on it (a reaction).

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use kernel_proto::v1 as pb;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{escape, markdown};
use crate::state::Web;

/// `GET /sessions/{id}`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Path(id): Path<i64>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let history = match client
        .get_session_history(pb::GetSessionHistoryRequest { session_id: id })
        .await
    {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let title = history
        .session
        .as_ref()
        .map(|s| s.title.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(t.sessions_untitled());
    let mut body = format!(
        "<p><a href=\"/sessions\">← {}</a></p><div id=\"history\">",
        escape(t.nav_sessions())
    );
    if history.messages.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.history_empty())));
    }
    for m in &history.messages {
        let (class, who, text) = if super::chat_page::by_owner(m) {
            ("msg me", t.history_you(), escape(&m.text))
        } else {
            ("msg answer", t.history_kernel(), markdown(&m.text))
        };
        body.push_str(&format!(
            "<div class=\"{class}\"><div class=\"meta\">{} · {}</div>",
            escape(who),
            escape(&m.time)
        ));
        if !m.text.is_empty() {
            body.push_str(&format!("<div class=\"text\">{text}</div>"));
        }
        if !m.tools.is_empty() {
            body.push_str(&format!(
                "<div class=\"tool\">⚙ {}{}</div>",
                escape(t.history_tools()),
                escape(&m.tools.join(", "))
            ));
        }
        if !m.feedback.is_empty() {
            body.push_str(&format!(
                "<div class=\"feedback\">{}{}</div>",
                escape(t.history_feedback()),
                escape(&m.feedback)
            ));
        }
        body.push_str("</div>");
    }
    body.push_str("</div>");
    shell(&web, &csrf, title, &body)
}
