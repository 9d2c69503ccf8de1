//! Status: agentd's `GetStatus` (version, uptime, provider and model, outbox backlog,
//! cooldowns, MCP servers, CLI sandboxes) as a table, every value escaped.

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use kernel_proto::v1 as pb;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::escape;
use crate::state::Web;

/// `GET /status`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let s = match client.get_status(pb::GetStatusRequest {}).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("version", s.version.clone()),
        ("uptime", format!("{} s", s.uptime_seconds)),
        ("provider", s.provider.clone()),
        ("model", s.model.clone()),
        ("outbox backlog", s.undelivered.to_string()),
        ("FTS5", s.fts5_available.to_string()),
        (
            "context",
            format!("{} / {}", s.context_tokens, s.context_budget_tokens),
        ),
    ];
    if let Some(error) = &s.last_error {
        rows.push(("last error", error.clone()));
    }
    for c in &s.cooldowns {
        rows.push(("cooldown", format!("{c:?}")));
    }
    for m in &s.mcp_servers {
        rows.push(("MCP", format!("{m:?}")));
    }
    for c in &s.cli_sandboxes {
        rows.push(("CLI", format!("{c:?}")));
    }
    let mut body = String::from("<table id=\"status\">");
    for (key, value) in rows {
        body.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(key),
            escape(&value)
        ));
    }
    body.push_str("</table>");
    shell(&web, &csrf, t.status_title(), &body)
}
