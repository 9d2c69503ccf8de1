//! The web console's reading RPCs: `GetUsageHistory` (calls, tokens and cost per local day,
//! provider, model and purpose) and `GetSessionHistory` (a session's messages by id), neither
//! changing a listing (`SearchSessions` is in `rpc::history`); and `RenameSession` (the owner's
//! own title); proto ⇄ domain.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::convert::session_info;
use super::{AgentService, to_status};
use crate::error::ApiError;

/// The days `GetUsageHistory` covers when asked for 0.
const DEFAULT_HISTORY_DAYS: u32 = 90;

impl AgentService {
    pub(super) async fn get_usage_history_rpc(
        &self,
        req: pb::GetUsageHistoryRequest,
    ) -> Result<pb::GetUsageHistoryResponse, Status> {
        let days = if req.days == 0 {
            DEFAULT_HISTORY_DAYS
        } else {
            req.days
        };
        let history = self
            .agent
            .usage()
            .history(days)
            .await
            .map_err(|e| to_status(ApiError::internal(e)))?;
        let date = |d: chrono::NaiveDate| d.format("%Y-%m-%d").to_string();
        Ok(pb::GetUsageHistoryResponse {
            dates: history.dates.into_iter().map(date).collect(),
            days: history
                .days
                .into_iter()
                .map(|d| pb::UsageDay {
                    date: date(d.date),
                    provider: d.provider,
                    model: d.model,
                    purpose: d.purpose,
                    calls: d.calls,
                    input_tokens: d.usage.input_tokens,
                    output_tokens: d.usage.output_tokens,
                    cache_read_tokens: d.usage.cache_read_tokens,
                    cache_write_tokens: d.usage.cache_write_tokens,
                    cost_usd: d.cost_usd,
                })
                .collect(),
        })
    }

    pub(super) async fn get_session_history_rpc(
        &self,
        req: pb::GetSessionHistoryRequest,
    ) -> Result<pb::GetSessionHistoryResponse, Status> {
        let history = self
            .agent
            .sessions()
            .history(req.session_id)
            .await
            .map_err(to_status)?;
        Ok(pb::GetSessionHistoryResponse {
            session: Some(session_info(history.session)),
            messages: history
                .messages
                .into_iter()
                .map(|m| pb::HistoryMessage {
                    role: super::history::role(m.role).to_owned(),
                    text: m.text,
                    tools: m.tools,
                    time: m.time,
                    feedback: m.feedback,
                })
                .collect(),
        })
    }

    pub(super) async fn rename_session_rpc(
        &self,
        req: pb::RenameSessionRequest,
    ) -> Result<pb::RenameSessionResponse, Status> {
        let info = self
            .agent
            .sessions()
            .rename(req.number, &req.title)
            .await
            .map_err(to_status)?;
        // The owner's own title renames the session's Telegram topic too.
        self.agent.outbox().title_topic(info.id, &info.title).await;
        Ok(pb::RenameSessionResponse {
            session: Some(session_info(info)),
        })
    }
}
