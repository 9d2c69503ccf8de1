//! The schedule RPC bodies: `ListSchedules` (`#n`), `AddSchedule` and `DeleteSchedules` (`#n`),
//! proto ⇄ domain over `Schedules`.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::schedule::{Mode, ScheduleInfo};

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
            .add(&req.when, &req.message, mode, Some(&req.model))
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
    }
}
