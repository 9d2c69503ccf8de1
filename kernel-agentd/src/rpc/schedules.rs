//! The schedule RPC bodies: `ListSchedules` (`#n`), `AddSchedule`, `DeleteSchedules` (`#n`) and
//! `ControlSchedule` (pause / resume / delete one, by `#n` or id), proto ⇄ domain over
//! `Schedules`.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::error::ApiError;
use crate::schedule::{Control, Mode, ScheduleInfo};

impl AgentService {
    /// Lists schedules numbered `#1..` (the mapping for `DeleteSchedules`).
    pub(super) async fn list_schedules_rpc(&self) -> Result<pb::ListSchedulesResponse, Status> {
        let list = self
            .agent
            .schedules()
            .list_numbered()
            .await
            .map_err(to_status)?;
        Ok(pb::ListSchedulesResponse {
            schedules: list.into_iter().map(schedule_info).collect(),
        })
    }

    /// Adds a schedule (no model call).
    pub(super) async fn add_schedule_rpc(
        &self,
        req: pb::AddScheduleRequest,
    ) -> Result<pb::AddScheduleResponse, Status> {
        let mode = Mode::parse(&req.mode).map_err(|e| to_status(e.into()))?;
        let info = self
            .agent
            .schedules()
            .add(&req.when, &req.message, mode, Some(&req.model), None)
            .await
            .map_err(|e| to_status(e.into()))?;
        Ok(pb::AddScheduleResponse {
            schedule: Some(schedule_info(info)),
        })
    }

    /// Deletes schedules by `#n` of the latest listing.
    pub(super) async fn delete_schedules_rpc(
        &self,
        req: pb::DeleteSchedulesRequest,
    ) -> Result<pb::DeleteSchedulesResponse, Status> {
        let deleted = self
            .agent
            .schedules()
            .delete_numbered(&req.numbers)
            .await
            .map_err(to_status)?;
        Ok(pb::DeleteSchedulesResponse {
            deleted: u32::try_from(deleted).unwrap_or(u32::MAX),
        })
    }
}

impl AgentService {
    /// Pauses, resumes or deletes one schedule.
    pub(super) async fn control_schedule_rpc(
        &self,
        req: pb::ControlScheduleRequest,
    ) -> Result<pb::ControlScheduleResponse, Status> {
        use kernel_proto::words::ScheduleAction;
        let action = match ScheduleAction::parse(req.action.trim()) {
            Some(ScheduleAction::Pause) => Control::Pause,
            Some(ScheduleAction::Resume) => Control::Resume,
            Some(ScheduleAction::Delete) => Control::Delete,
            None => {
                return Err(to_status(ApiError::InvalidArgument(format!(
                    "unknown action {:?}: use \"pause\", \"resume\" or \"delete\"",
                    req.action
                ))));
            }
        };
        if req.number == 0 && req.id <= 0 {
            return Err(to_status(ApiError::InvalidArgument(
                "name the schedule: a #n number or its id".to_owned(),
            )));
        }
        let (found, info) = self
            .agent
            .schedules()
            .control(req.number, req.id, action)
            .await
            .map_err(to_status)?;
        Ok(pb::ControlScheduleResponse {
            schedule: info.map(schedule_info),
            found,
        })
    }
}

/// A schedule for the wire.
fn schedule_info(info: ScheduleInfo) -> pb::ScheduleInfo {
    pb::ScheduleInfo {
        number: info.number,
        id: info.id,
        next_fire: info.next_local,
        mode: info.mode.as_str().to_owned(),
        message: info.message,
        cron: info.cron.unwrap_or_default(),
        model: info.model.unwrap_or_default(),
        paused: info.paused,
        last_run_at: info
            .watch
            .last
            .as_ref()
            .map(|l| l.0.clone())
            .unwrap_or_default(),
        last_outcome: info
            .watch
            .last
            .as_ref()
            .map(|l| l.1.as_str().to_owned())
            .unwrap_or_default(),
        last_summary: info.watch.last.map(|l| l.2).unwrap_or_default(),
        runs_today: info.watch.runs_today,
        spend_today_usd: info.watch.spend_today_usd,
    }
}
