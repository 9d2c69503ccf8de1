//! The background job RPC bodies: `ListJobs` (`#n`) and `CancelJob` (`#n`), proto ⇄ domain over
//! `Jobs`.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::jobs::JobInfo;

impl AgentService {
    /// Lists jobs numbered `#1..` (the mapping for `CancelJob`).
    pub(super) async fn list_jobs_rpc(&self) -> Result<pb::ListJobsResponse, Status> {
        let list = self.agent.jobs().list_numbered().await.map_err(to_status)?;
        Ok(pb::ListJobsResponse {
            jobs: list.into_iter().map(job_info).collect(),
        })
    }

    /// Cancels a job by `#n` of the latest listing.
    pub(super) async fn cancel_job_rpc(
        &self,
        req: pb::CancelJobRequest,
    ) -> Result<pb::CancelJobResponse, Status> {
        let cancelled = self
            .agent
            .jobs()
            .cancel_numbered(req.number)
            .await
            .map_err(to_status)?;
        Ok(pb::CancelJobResponse { cancelled })
    }
}

/// A job for the wire.
fn job_info(info: JobInfo) -> pb::JobInfo {
    pb::JobInfo {
        number: info.number,
        id: info.id,
        cli: info.cli,
        task: info.task,
        status: info.status,
        started: info.started_local,
        exit_code: info.exit_code,
        output_path: info.output_path,
    }
}
