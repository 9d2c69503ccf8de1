//! `GrantBudgetOverride`: the owner's "Continue today / this month" after a budget limit
//! stopped a turn (granted only for the current period; a stale or forged one changes nothing);
//! the budget, per-model and per-purpose figures of `GetUsage` and `GetStatus`.

use tonic::Status;

use kernel_proto::v1 as pb;

use super::{AgentService, to_status};
use crate::budget::Standing;
use crate::error::ApiError;
use crate::usage::CostLine;

/// Each configured limit of `standing`.
pub(super) fn budget_lines(standing: &Standing) -> Vec<pb::BudgetLine> {
    standing
        .limits
        .iter()
        .map(|l| pb::BudgetLine {
            period: l.period.as_str().to_owned(),
            provider: l.provider.clone().unwrap_or_default(),
            spent_usd: l.spent_usd,
            limit_usd: l.limit_usd,
            left_usd: l.left_usd(),
        })
        .collect()
}

fn cost_lines(lines: Vec<CostLine>) -> Vec<pb::CostLine> {
    lines
        .into_iter()
        .map(|l| pb::CostLine {
            provider: l.provider,
            model: l.model,
            calls: l.calls,
            cost_usd: l.cost_usd,
            purpose: l.purpose,
        })
        .collect()
}

impl AgentService {
    pub(super) async fn grant_budget_override_rpc(
        &self,
        req: pb::GrantBudgetOverrideRequest,
    ) -> Result<pb::GrantBudgetOverrideResponse, Status> {
        let period = req.period.trim();
        if period.is_empty() || period.len() > 32 {
            return Ok(pb::GrantBudgetOverrideResponse::default());
        }
        let done = self
            .agent
            .turns()
            .continue_refused(period, req.refusal.trim())
            .await
            .map_err(to_status)?;
        Ok(pb::GrantBudgetOverrideResponse {
            granted: done.granted,
            runs: done.runs,
        })
    }

    /// Adds the budget and the per-model figures to a `GetUsage` reply.
    pub(super) async fn add_budget_to_usage(
        &self,
        reply: &mut pb::GetUsageResponse,
    ) -> Result<(), Status> {
        let internal = |e| to_status(ApiError::internal(e));
        let standing = self
            .agent
            .turns()
            .budget()
            .standing()
            .await
            .map_err(internal)?;
        let ledger = self.agent.usage();
        reply.budgets = budget_lines(&standing);
        reply.override_today = standing.day_override;
        reply.override_month = standing.month_override;
        reply.today_by_model = cost_lines(
            ledger
                .by_model_since(standing.periods.day_start)
                .await
                .map_err(internal)?,
        );
        reply.month_by_model = cost_lines(
            ledger
                .by_model_since(standing.periods.month_start)
                .await
                .map_err(internal)?,
        );
        (reply.today_by_purpose, reply.month_by_purpose) = self.by_purpose(&standing).await?;
        Ok(())
    }

    /// Adds the budget figures to a `GetStatus` reply.
    pub(super) async fn add_budget_to_status(
        &self,
        reply: &mut pb::GetStatusResponse,
    ) -> Result<(), Status> {
        let standing = self
            .agent
            .turns()
            .budget()
            .standing()
            .await
            .map_err(|e| to_status(ApiError::internal(e)))?;
        reply.budgets = budget_lines(&standing);
        reply.spent_today_usd = standing.today.total;
        reply.spent_month_usd = standing.month.total;
        reply.override_today = standing.day_override;
        reply.override_month = standing.month_override;
        (reply.today_by_purpose, reply.month_by_purpose) = self.by_purpose(&standing).await?;
        Ok(())
    }

    /// Today's and this month's calls and cost per provider, model and purpose.
    async fn by_purpose(
        &self,
        standing: &Standing,
    ) -> Result<(Vec<pb::CostLine>, Vec<pb::CostLine>), Status> {
        let internal = |e| to_status(ApiError::internal(e));
        let ledger = self.agent.usage();
        let today = ledger
            .by_purpose_since(standing.periods.day_start)
            .await
            .map_err(internal)?;
        let month = ledger
            .by_purpose_since(standing.periods.month_start)
            .await
            .map_err(internal)?;
        Ok((cost_lines(today), cost_lines(month)))
    }
}
