//! Skills: `GET /skills` lists the installed skills (`ListSkills`: name, what it is for, its
//! declared side effects), every value escaped.

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use kernel_proto::v1 as pb;
use kernel_proto::words::SkillSideEffects;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::escape;
use crate::state::Web;

/// `GET /skills`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let skills = match client.list_skills(pb::ListSkillsRequest {}).await {
        Ok(reply) => reply.into_inner().skills,
        Err(status) => return refused(&web, &status),
    };
    let mut body = String::new();
    if skills.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.skills_none())));
    } else {
        body.push_str("<table id=\"skills\">");
        for s in &skills {
            body.push_str(&format!(
                "<tr class=\"skill\"><td><b>{}</b></td><td>{}</td><td>{}</td></tr>",
                escape(&s.name),
                escape(&s.description),
                escape(
                    SkillSideEffects::parse(&s.side_effects)
                        .map_or(s.side_effects.as_str(), |level| t
                            .said()
                            .side_effects(level))
                )
            ));
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_skills(), &body)
}
