//! Status: agentd's `GetStatus` and `Doctor` as sections — agentd (version, uptime, provider and
//! model, the running turn, the last error, context, spend), the outbox backlog, providers
//! cooling down, MCP servers, CLIs and their sandboxes, and the doctor's checks with their
//! verdicts and fixes. Every value is escaped.

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use kernel_proto::v1 as pb;
use kernel_proto::words::DoctorVerdict;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::escape;
use crate::state::Web;
use crate::texts::Texts;

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
    // The doctor is informative: its failure leaves the rest of the page.
    let doctor = client
        .doctor(pb::DoctorRequest {})
        .await
        .ok()
        .map(tonic::Response::into_inner);
    let mut body = agentd_section(t, &s);
    body.push_str(&outbox_section(t, &s));
    body.push_str(&cooldowns_section(t, &s.cooldowns));
    body.push_str(&mcp_section(t, &s.mcp_servers));
    body.push_str(&clis_section(t, &s.cli_sandboxes));
    if let Some(d) = &doctor {
        body.push_str(&doctor_section(t, d));
    }
    shell(&web, &csrf, t.status_title(), &body)
}

fn agentd_section(t: Texts, s: &pb::GetStatusResponse) -> String {
    let running = match &s.running_turn {
        Some(turn) => format!(
            "{} {}",
            turn.started_at,
            turn.running_tool.as_deref().unwrap_or_default()
        ),
        None => t.status_idle().to_owned(),
    };
    let mut rows = vec![
        (t.status_version(), s.version.clone()),
        (t.status_uptime(), duration(s.uptime_seconds)),
        (t.status_provider(), format!("{} / {}", s.provider, s.model)),
        (t.status_running(), running),
        (
            t.status_context(),
            format!("{} / {}", s.context_tokens, s.context_budget_tokens),
        ),
        (
            t.status_spent(),
            format!("${:.4} / ${:.4}", s.spent_today_usd, s.spent_month_usd),
        ),
    ];
    if let Some(error) = &s.last_error {
        rows.push((t.status_last_error(), error.clone()));
    }
    let mut out = format!(
        "<h2>{}</h2><table id=\"status\">",
        escape(t.status_agentd())
    );
    for (key, value) in rows {
        out.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(key),
            escape(&value)
        ));
    }
    out.push_str("</table>");
    out
}

fn outbox_section(t: Texts, s: &pb::GetStatusResponse) -> String {
    let oldest = s
        .oldest_undelivered_seconds
        .map_or_else(|| t.status_none().to_owned(), duration);
    format!(
        "<h2>{}</h2><table id=\"outbox\"><tr><th>{}</th><td>{}</td></tr>\
         <tr><th>{}</th><td>{}</td></tr></table>",
        escape(t.status_outbox()),
        escape(t.status_backlog()),
        s.undelivered,
        escape(t.status_oldest()),
        escape(&oldest)
    )
}

fn cooldowns_section(t: Texts, cooldowns: &[pb::ProviderCooldown]) -> String {
    let rows: Vec<Vec<String>> = cooldowns
        .iter()
        .map(|c| vec![c.provider.clone(), c.until.clone(), c.failures.to_string()])
        .collect();
    let head = [t.status_provider(), t.status_until(), t.status_failures()];
    section(t, "cooldowns", t.status_cooldowns(), &head, &rows)
}

fn mcp_section(t: Texts, servers: &[pb::McpServerStatus]) -> String {
    let rows: Vec<Vec<String>> = servers
        .iter()
        .map(|m| {
            vec![
                m.name.clone(),
                m.state.clone(),
                m.tool_count.to_string(),
                m.detail.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let head = ["", t.status_state(), t.status_tools(), t.status_detail()];
    section(t, "mcp", t.status_mcp(), &head, &rows)
}

fn clis_section(t: Texts, clis: &[pb::CliSandbox]) -> String {
    let rows: Vec<Vec<String>> = clis
        .iter()
        .map(|c| {
            let state = match pb::CliSandboxState::try_from(c.state) {
                Ok(pb::CliSandboxState::Sandboxed) => t.sandbox_on(),
                Ok(pb::CliSandboxState::Off) => t.sandbox_off(),
                Ok(pb::CliSandboxState::Unavailable) => t.sandbox_unavailable(),
                _ => t.sandbox_unknown(),
            };
            vec![c.cli.clone(), state.to_owned(), c.detail.clone()]
        })
        .collect();
    let head = ["", t.status_sandbox(), t.status_detail()];
    section(t, "clis", t.status_clis(), &head, &rows)
}

fn doctor_section(t: Texts, d: &pb::DoctorResponse) -> String {
    let verdict = if d.failed {
        t.status_doctor_failed()
    } else {
        t.status_doctor_ok()
    };
    let mut out = format!(
        "<h2>{}</h2><p class=\"verdict\">{}</p><table id=\"doctor\"><tr><th>{}</th><th>{}</th>\
         <th>{}</th><th>{}</th></tr>",
        escape(t.status_doctor()),
        escape(verdict),
        escape(t.status_verdict()),
        escape(t.status_check()),
        escape(t.status_detail()),
        escape(t.status_fix()),
    );
    for c in &d.checks {
        let class = match DoctorVerdict::parse(&c.verdict) {
            Some(v @ (DoctorVerdict::Ok | DoctorVerdict::Warn | DoctorVerdict::Fail)) => v.as_str(),
            None => "unknown",
        };
        out.push_str(&format!(
            "<tr class=\"check {class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&c.verdict.to_uppercase()),
            escape(&c.name),
            escape(&c.detail),
            escape(&c.fix)
        ));
    }
    out.push_str("</table>");
    out
}

/// A titled table (or "none" when it has no rows).
fn section(t: Texts, id: &str, title: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("<h2>{}</h2>", escape(title));
    if rows.is_empty() {
        out.push_str(&format!("<p id=\"{id}\">{}</p>", escape(t.status_none())));
        return out;
    }
    out.push_str(&format!("<table id=\"{id}\"><tr>"));
    for h in head {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// `3725` → `1h 2m 5s`.
fn duration(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m {s}s"),
        _ => format!("{h}h {m}m {s}s"),
    }
}

#[cfg(test)]
mod tests {
    use kernel_common::config::Locale;

    use super::*;

    #[test]
    fn durations_and_doctor_rows_are_formatted_and_escaped() {
        assert_eq!(duration(5), "5s");
        assert_eq!(duration(3725), "1h 2m 5s");
        let d = pb::DoctorResponse {
            checks: vec![pb::DoctorCheck {
                verdict: "fail".into(),
                name: "<db>".into(),
                detail: "x".into(),
                fix: "y".into(),
            }],
            failed: true,
            text: String::new(),
        };
        let html = doctor_section(Texts::new(Locale::En), &d);
        assert!(html.contains("class=\"check fail\""), "{html}");
        assert!(html.contains("&lt;db&gt;"), "{html}");
        assert!(html.contains("Some checks failed"), "{html}");
    }
}
