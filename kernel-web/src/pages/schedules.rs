//! Schedules and background jobs: `GET /schedules` lists the reminders and scheduled tasks
//! (`ListSchedules`: next run, cron, mode, text) each with Delete, and the background jobs
//! (`ListJobs`: the status in the owner's words, the wire's word as `data-status`) with Cancel
//! on the running ones; `POST /schedules/delete` and `/jobs/cancel` act on a number of those
//! listings (the page's load made them).

use axum::Extension;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Redirect, Response};
use kernel_proto::v1 as pb;
use kernel_proto::words::JobStatus;
use serde::Deserialize;

use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::{csrf_field, escape};
use crate::state::Web;

/// `GET /schedules`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let schedules = match client.list_schedules(pb::ListSchedulesRequest {}).await {
        Ok(reply) => reply.into_inner().schedules,
        Err(status) => return refused(&web, &status),
    };
    let jobs = match client.list_jobs(pb::ListJobsRequest {}).await {
        Ok(reply) => reply.into_inner().jobs,
        Err(status) => return refused(&web, &status),
    };
    let button = |path: &str, number: u32, class: &str, label: &str| {
        format!(
            "<form class=\"inline\" method=\"post\" action=\"{path}\">{}\
             <input type=\"hidden\" name=\"number\" value=\"{number}\">\
             <button type=\"submit\" class=\"{class}\">{}</button></form>",
            csrf_field(&csrf),
            escape(label)
        )
    };
    let mut body = String::new();
    if schedules.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.schedules_none())));
    } else {
        body.push_str("<table id=\"schedules\">");
        for s in &schedules {
            body.push_str(&format!(
                "<tr class=\"schedule\"><td>#{n}</td><td>{next_label} {next}</td><td>{cron}</td>\
                 <td>{mode}</td><td class=\"schedule-text\">{text}</td><td>{delete}</td></tr>",
                n = s.number,
                next_label = escape(t.schedules_next()),
                next = escape(&s.next_fire),
                cron = escape(&s.cron),
                mode = escape(&s.mode),
                text = escape(&s.message),
                delete = button(
                    "/schedules/delete",
                    s.number,
                    "delete",
                    t.schedules_delete()
                ),
            ));
        }
        body.push_str("</table>");
    }
    body.push_str(&format!("<h2>{}</h2>", escape(t.jobs_title())));
    if jobs.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.jobs_none())));
    } else {
        body.push_str("<table id=\"jobs\">");
        for j in &jobs {
            let running = match JobStatus::parse(&j.status) {
                Some(JobStatus::Running) => true,
                Some(
                    JobStatus::Done
                    | JobStatus::Failed
                    | JobStatus::Cancelled
                    | JobStatus::Interrupted,
                )
                | None => false,
            };
            let cancel = if running {
                button("/jobs/cancel", j.number, "cancel", t.jobs_cancel())
            } else {
                String::new()
            };
            let exit = j.exit_code.map(|c| format!(" ({c})")).unwrap_or_default();
            body.push_str(&format!(
                "<tr class=\"job\" data-status=\"{state}\"><td>#{n}</td><td>{cli}</td>\
                 <td class=\"job-task\">{task}</td><td class=\"job-status\">{status}{exit}</td>\
                 <td>{started}</td><td>{cancel}</td></tr>",
                state = escape(&j.status),
                n = j.number,
                cli = escape(&j.cli),
                task = escape(&j.task),
                status = escape(t.job_status(&j.status)),
                started = escape(&j.started),
            ));
        }
        body.push_str("</table>");
    }
    shell(&web, &csrf, t.nav_schedules(), &body)
}

#[derive(Deserialize)]
pub(crate) struct NumberForm {
    number: u32,
}

/// `POST /schedules/delete`.
pub(crate) async fn delete(State(web): State<Web>, Form(form): Form<NumberForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::DeleteSchedulesRequest {
        numbers: vec![form.number],
    };
    match client.delete_schedules(request).await {
        Ok(_) => Redirect::to("/schedules").into_response(),
        Err(status) => refused(&web, &status),
    }
}

/// `POST /jobs/cancel`.
pub(crate) async fn cancel(State(web): State<Web>, Form(form): Form<NumberForm>) -> Response {
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let request = pb::CancelJobRequest {
        number: form.number,
    };
    match client.cancel_job(request).await {
        Ok(_) => Redirect::to("/schedules").into_response(),
        Err(status) => refused(&web, &status),
    }
}
