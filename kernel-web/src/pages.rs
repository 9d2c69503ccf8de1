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

use kernel_common::said;

use crate::html;
use crate::state::Web;

/// A page saying agentd refused (its message, escaped) or could not be reached.
pub(crate) fn refused(web: &Web, status: &tonic::Status) -> Response {
    let t = web.texts;
    if kernel_common::agentd_client::is_transport_failure(status) {
        web.agentd.lost();
        return (StatusCode::SERVICE_UNAVAILABLE, t.agentd_unreachable()).into_response();
    }
    (StatusCode::BAD_REQUEST, refusal_text(web, status)).into_response()
}

/// agentd's refusal in the owner's language (the shared words, `kernel_common::said`), or its
/// English message when the refusal carries no reason this build can say.
pub(crate) fn refusal_text(web: &Web, status: &tonic::Status) -> String {
    let said = kernel_proto::refusal::of(status).and_then(|r| web.texts.said().refusal(&r));
    match said {
        Some(html) => said::plain(&html),
        None => format!("{}{}", web.texts.refused(), status.message()),
    }
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use kernel_common::config::Locale;

    use crate::texts::Texts;

    #[test]
    fn a_budget_refusal_is_said_in_chinese_by_default_as_plain_text() {
        let args: HashMap<String, String> = [
            ("period", "daily"),
            ("provider", ""),
            ("spent_usd", "5.20"),
            ("limit_usd", "5.00"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let refusal = kernel_proto::v1::Refusal {
            reason: "BUDGET_EXCEEDED".into(),
            args,
        };
        let status = kernel_proto::refusal::status(
            tonic::Code::ResourceExhausted,
            "the daily budget is used up".into(),
            &refusal,
        );
        let said = kernel_proto::refusal::of(&status)
            .and_then(|r| Texts::new(Locale::default()).said().refusal(&r))
            .map(|html| kernel_common::said::plain(&html))
            .unwrap();
        assert!(
            said.contains("今日预算") && said.contains("$5.20"),
            "{said}"
        );
        assert!(!said.contains("budget is used up"), "{said}");
    }
}
