//! The chat page, `GET /chat[?session=ID][&show=N]`: the conversation of the current session
//! (or of session `ID`), its latest [`SHOWN`] messages rendered (the owner's words escaped,
//! Kernel's Markdown through kernel-render's web renderer) with "load earlier", the live log
//! the script streams into, the composer, and a sidebar of recent sessions with "new session";
//! `POST /sessions/new` starts a session (`NewSession`). The composer sends into the session
//! shown (`Chat.session_id`), so a tab on another session carries on there, beside the current
//! one, and says so, with "make it current" (`ResumeSession`). Right after agentd started there
//! is no current session yet: the page then shows the most recent one.

use axum::Extension;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use kernel_proto::words::MessageRole;
use serde::Deserialize;

use super::{refused, unreachable};
use crate::auth::Csrf;
use crate::html::{self, csrf_field, escape};
use crate::state::Web;
use crate::texts::Texts;

/// How many of a session's latest messages the page shows first.
pub(crate) const SHOWN: usize = 40;

#[derive(Deserialize)]
pub(crate) struct ChatQuery {
    session: Option<i64>,
    show: Option<usize>,
}

/// `GET /chat`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<ChatQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let sessions = match client.list_sessions(pb::ListSessionsRequest {}).await {
        Ok(reply) => reply.into_inner().sessions,
        Err(status) => return refused(&web, &status),
    };
    let current = sessions.iter().find(|s| s.current).map(|s| s.id);
    // No current session yet (agentd just started): the latest conversation, not an empty page.
    let shown_id = query
        .session
        .or(current)
        .or_else(|| sessions.first().map(|s| s.id));
    let mut messages = Vec::new();
    let mut is_current = query.session.is_none() || shown_id == current;
    if let Some(id) = shown_id {
        match client
            .get_session_history(pb::GetSessionHistoryRequest { session_id: id })
            .await
        {
            Ok(reply) => {
                let history = reply.into_inner();
                if let Some(info) = &history.session {
                    is_current = is_current || info.current;
                }
                messages = history.messages;
            }
            // The current session may not be stored yet: an empty conversation.
            Err(status) if query.session.is_none() && status.code() == tonic::Code::NotFound => {}
            Err(status) => return refused(&web, &status),
        }
    }
    let show = query.show.unwrap_or(SHOWN).clamp(1, 10_000);
    let body = format!(
        "<div class=\"chat\">{sidebar}<section class=\"conversation\">{conversation}</section></div>",
        sidebar = sidebar(t, &csrf, &sessions, shown_id),
        conversation = conversation(t, &csrf, &sessions, shown_id, is_current, &messages, show),
    );
    html::page(t, t.nav_chat(), &csrf, &body).into_response()
}

/// The sidebar: "new session" and the recent sessions, the one shown marked.
fn sidebar(t: Texts, csrf: &str, sessions: &[pb::SessionInfo], shown: Option<i64>) -> String {
    let mut items = String::new();
    for s in sessions {
        let title = if s.title.is_empty() {
            t.sessions_untitled()
        } else {
            s.title.as_str()
        };
        let mut class = String::from("session");
        if Some(s.id) == shown {
            class.push_str(" shown");
        }
        if s.current {
            class.push_str(" current");
        }
        items.push_str(&format!(
            "<li class=\"{class}\"><a href=\"/chat?session={id}\" data-id=\"{id}\">\
             <span class=\"title\">{title}</span><span class=\"date\">{date}</span></a></li>",
            id = s.id,
            title = escape(title),
            date = escape(&s.date),
        ));
    }
    format!(
        "<details id=\"sidebar\"><summary>{sessions}</summary>\
         <form method=\"post\" action=\"/sessions/new\">{csrf}\
         <button type=\"submit\" id=\"new-session\">＋ {new}</button></form>\
         <ul id=\"session-list\">{items}</ul>\
         <a class=\"all\" href=\"/sessions\">{all}</a></details>",
        sessions = escape(t.nav_sessions()),
        csrf = csrf_field(csrf),
        new = escape(t.chat_new_session()),
        all = escape(t.chat_all_sessions()),
    )
}

/// The messages (the latest `show`), the live log, "make it current" when the session shown is
/// not, and the composer.
fn conversation(
    t: Texts,
    csrf: &str,
    sessions: &[pb::SessionInfo],
    shown: Option<i64>,
    is_current: bool,
    messages: &[pb::HistoryMessage],
    show: usize,
) -> String {
    let mut out = String::new();
    let skipped = messages.len().saturating_sub(show);
    if skipped > 0 {
        let id = shown.map(|id| format!("session={id}&")).unwrap_or_default();
        out.push_str(&format!(
            "<p class=\"earlier\"><a id=\"load-earlier\" href=\"/chat?{id}show={more}\">↑ {label} ({skipped})</a></p>",
            more = show + SHOWN,
            label = escape(t.chat_load_earlier()),
        ));
    }
    out.push_str(&format!(
        "<div id=\"chat-log\" data-session=\"{session}\" data-copy=\"{copy}\" \
         data-copied=\"{copied}\" data-retry=\"{retry}\" data-edit=\"{edit}\" data-save=\"{save}\" \
         data-cancel=\"{cancel}\" data-again=\"{again}\">",
        session = shown.map(|id| id.to_string()).unwrap_or_default(),
        copy = escape(t.chat_copy()),
        copied = escape(t.chat_copied()),
        retry = escape(t.chat_retry()),
        edit = escape(t.chat_edit()),
        save = escape(t.chat_save()),
        cancel = escape(t.chat_cancel()),
        again = escape(t.chat_again()),
    ));
    if messages.is_empty() {
        out.push_str(&format!(
            "<p class=\"empty\" id=\"chat-empty\">{}</p>",
            escape(t.chat_empty())
        ));
    }
    for m in &messages[skipped..] {
        out.push_str(&past_message(t, m));
    }
    out.push_str("</div>");
    if !is_current {
        let resume = sessions
            .iter()
            .find(|s| Some(s.id) == shown && s.number > 0)
            .map(|s| {
                format!(
                    "<form method=\"post\" action=\"/sessions/resume\">{}\
                     <input type=\"hidden\" name=\"number\" value=\"{}\">\
                     <button type=\"submit\" id=\"resume-session\">{}</button></form>",
                    csrf_field(csrf),
                    s.number,
                    escape(t.chat_resume()),
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "<div class=\"not-current\" id=\"not-current\"><p>{}</p>{resume}</div>",
            escape(t.chat_not_current())
        ));
    }
    out.push_str(&composer(t));
    out
}

/// Whether the owner wrote a stored message (a role this build does not know: Kernel).
pub(super) fn by_owner(m: &pb::HistoryMessage) -> bool {
    match MessageRole::parse(&m.role) {
        Some(MessageRole::User) => true,
        Some(MessageRole::Assistant) | None => false,
    }
}

/// One stored message: the owner's text escaped, Kernel's rendered, the tools it called.
fn past_message(t: Texts, m: &pb::HistoryMessage) -> String {
    let mine = by_owner(m);
    let (class, who) = if mine {
        ("msg me past", t.history_you())
    } else {
        ("msg kernel past", t.history_kernel())
    };
    let mut out = format!(
        "<div class=\"{class}\"><div class=\"meta\">{} · {}</div>",
        escape(who),
        escape(&m.time)
    );
    if !m.text.is_empty() {
        let text = if mine {
            format!("<div class=\"text plain\">{}</div>", escape(&m.text))
        } else {
            format!(
                "<div class=\"text rendered\">{}</div>",
                html::markdown(&m.text)
            )
        };
        out.push_str(&text);
    }
    if !m.tools.is_empty() {
        out.push_str(&format!(
            "<div class=\"tool\">⚙ {}{}</div>",
            escape(t.history_tools()),
            escape(&m.tools.join(", "))
        ));
    }
    out.push_str("</div>");
    out
}

/// A paperclip, drawn (no emoji font needed).
const CLIP: &str = "<svg class=\"icon\" viewBox=\"0 0 24 24\" aria-hidden=\"true\"><path d=\"M21 11.5l-8.5 8.5a5.5 5.5 0 0 1-7.8-7.8l9.2-9.2a3.7 3.7 0 0 1 5.2 5.2l-9.2 9.2a1.8 1.8 0 0 1-2.6-2.6l8.5-8.5\"/></svg>";

/// The composer: the text, a localized attach button with the chosen files, Send and Stop.
fn composer(t: Texts) -> String {
    format!(
        "<form id=\"chat-form\"><textarea id=\"chat-text\" name=\"text\" rows=\"2\" \
         placeholder=\"{ph}\" enterkeyhint=\"send\"></textarea>\
         <div class=\"controls\"><label class=\"attach button\" id=\"chat-attach\" title=\"{hint}\">\
         <input type=\"file\" id=\"chat-files\" multiple>{CLIP}{attach}</label>\
         <span id=\"chat-chosen\" data-remove=\"{remove}\"></span>\
         <span class=\"spacer\"></span>\
         <button type=\"button\" id=\"chat-stop\" class=\"secondary\">{stop}</button>\
         <button type=\"submit\" id=\"chat-send\">{send}</button></div>\
         <p class=\"hint\">{keys}</p></form>",
        ph = escape(t.chat_placeholder()),
        attach = escape(t.chat_attach()),
        hint = escape(t.chat_attach_hint()),
        remove = escape(t.chat_remove_file()),
        stop = escape(t.chat_stop()),
        send = escape(t.chat_send()),
        keys = escape(t.chat_keys()),
    )
}

/// `POST /sessions/new`: a new current session, then the chat on it.
pub(crate) async fn new_session(State(web): State<Web>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    match client.new_session(pb::NewSessionRequest::default()).await {
        Ok(_) => Redirect::to("/chat").into_response(),
        Err(status) => refused(&web, &status),
    }
}
