//! Commands about work done in the background: `/tasks` (reminders, scheduled tasks and
//! watches: listed, deleted, paused or resumed by number) and `/jobs` (delegated CLI jobs,
//! listed or cancelled by number).

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::Client;
use crate::texts::{JobEntry, ScheduleEntry, Texts};

/// `/tasks`: the numbered scheduled tasks.
pub(super) async fn tasks(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let list = client
        .list_schedules(pb::ListSchedulesRequest {})
        .await?
        .into_inner();
    let entries: Vec<_> = list
        .schedules
        .iter()
        .map(|s| ScheduleEntry {
            number: s.number,
            next_fire: &s.next_fire,
            mode: &s.mode,
            message: &s.message,
            cron: &s.cron,
            model: &s.model,
            paused: s.paused,
            last_run_at: &s.last_run_at,
            last_outcome: &s.last_outcome,
            last_summary: &s.last_summary,
            runs_today: s.runs_today,
            spend_today_usd: s.spend_today_usd,
        })
        .collect();
    Ok(texts.schedules(&entries))
}

/// `/tasks pause <n>` (`paused`) or `/tasks resume <n>`.
pub(super) async fn pause_task(
    client: &mut Client,
    texts: Texts,
    number: u32,
    paused: bool,
) -> Result<String, Status> {
    use kernel_proto::words::ScheduleAction;
    let action = if paused {
        ScheduleAction::Pause
    } else {
        ScheduleAction::Resume
    };
    client
        .control_schedule(pb::ControlScheduleRequest {
            number,
            id: 0,
            action: action.as_str().to_owned(),
        })
        .await?;
    Ok(if paused {
        texts.schedule_paused()
    } else {
        texts.schedule_resumed()
    }
    .to_owned())
}

/// `/tasks delete <n…>`: deletes the numbered scheduled tasks.
pub(super) async fn delete_tasks(
    client: &mut Client,
    texts: Texts,
    numbers: Vec<u32>,
) -> Result<String, Status> {
    let reply = client
        .delete_schedules(pb::DeleteSchedulesRequest { numbers })
        .await?;
    Ok(texts.schedules_deleted(reply.into_inner().deleted as usize))
}

/// `/jobs`: the numbered background jobs.
pub(super) async fn jobs(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let list = client.list_jobs(pb::ListJobsRequest {}).await?.into_inner();
    let entries: Vec<_> = list
        .jobs
        .iter()
        .map(|j| JobEntry {
            number: j.number,
            status: &j.status,
            started: &j.started,
            cli: &j.cli,
            task: &j.task,
            exit_code: j.exit_code,
        })
        .collect();
    Ok(texts.jobs(&entries))
}

/// `/jobs cancel <n>`: cancels background job `number`.
pub(super) async fn cancel_job(
    client: &mut Client,
    texts: Texts,
    number: u32,
) -> Result<String, Status> {
    let reply = client.cancel_job(pb::CancelJobRequest { number }).await?;
    Ok(texts.job_cancelled(reply.into_inner().cancelled))
}
