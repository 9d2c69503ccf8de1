//! `GrantBudgetOverride`: the owner's "Continue today / this month" after a budget limit
//! stopped a turn (granted only for the current period; a stale or forged one changes nothing).

use tonic::Status;

use kernel_proto::v1 as pb;

use super::{AgentService, to_status};
use crate::error::ApiError;

impl AgentService {
    pub(super) async fn grant_budget_override_rpc(
        &self,
        req: pb::GrantBudgetOverrideRequest,
    ) -> Result<pb::GrantBudgetOverrideResponse, Status> {
        let period = req.period.trim();
        if period.is_empty() || period.len() > 32 {
            return Ok(pb::GrantBudgetOverrideResponse { granted: false });
        }
        let granted = self
            .agent
            .turns()
            .budget()
            .grant(period)
            .await
            .map_err(|e| to_status(ApiError::internal(e)))?;
        Ok(pb::GrantBudgetOverrideResponse { granted })
    }
}
