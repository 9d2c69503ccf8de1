//! The gRPC edge: `AgentService` implements `kernel.v1.Agent` by converting proto types to
//! domain calls on [`Agent`]. Only this module (and its children) sees proto types.

mod approvals;
mod budget;
mod chat;
mod convert;
mod history;
mod jobs;
mod living;
mod memory;
mod memory_browse;
mod outbox;
mod schedules;
mod status;
mod web;
mod web_history;

use std::pin::Pin;

use futures::Stream;
use kernel_proto::v1 as pb;
use kernel_proto::words::DoctorVerdict;
use tonic::{Request, Response, Status};

use crate::agent::Agent;
use crate::web_auth::WebAuth;
use convert::session_info;

pub(crate) use status::to_status;

/// The `kernel.v1.Agent` service.
#[derive(Debug, Clone)]
pub(crate) struct AgentService {
    agent: Agent,
    /// The web console's login tokens and session key (`rpc::web`).
    web: WebAuth,
    /// The config, for `Doctor`.
    config: std::sync::Arc<kernel_common::Config>,
}

impl AgentService {
    /// Wraps the agent.
    pub(crate) fn new(agent: Agent, web: WebAuth, config: kernel_common::Config) -> Self {
        Self {
            agent,
            web,
            config: std::sync::Arc::new(config),
        }
    }
}

type RpcResult<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl pb::agent_server::Agent for AgentService {
    type ChatStream = Pin<Box<dyn Stream<Item = Result<pb::ChatEvent, Status>> + Send + 'static>>;
    type SubscribeStream = outbox::SubscribeStream;

    async fn chat(&self, req: Request<pb::ChatRequest>) -> RpcResult<Self::ChatStream> {
        self.chat_events(req.into_inner()).await.map(Response::new)
    }

    async fn cancel(&self, req: Request<pb::CancelRequest>) -> RpcResult<pb::CancelResponse> {
        self.cancel_turn(req.into_inner()).await.map(Response::new)
    }

    async fn get_status(
        &self,
        _req: Request<pb::GetStatusRequest>,
    ) -> RpcResult<pb::GetStatusResponse> {
        let s = self.agent.status().await.map_err(to_status)?;
        let mut status = convert::status(s);
        status.queued_next = self.agent.turns().queued().await.map_err(to_status)?;
        self.add_budget_to_status(&mut status).await?;
        Ok(Response::new(status))
    }

    async fn new_session(
        &self,
        req: Request<pb::NewSessionRequest>,
    ) -> RpcResult<pb::NewSessionResponse> {
        let sessions = self.agent.sessions();
        let info = match req.into_inner().thread_id {
            Some(thread_id) => sessions.new_in_topic(thread_id).await,
            None => sessions.new_session().await,
        }
        .map_err(to_status)?;
        self.agent.memory_auto().session_ended();
        Ok(Response::new(pb::NewSessionResponse {
            session: Some(session_info(info)),
        }))
    }

    async fn list_sessions(
        &self,
        _req: Request<pb::ListSessionsRequest>,
    ) -> RpcResult<pb::ListSessionsResponse> {
        let list = self.agent.sessions().list().await.map_err(to_status)?;
        Ok(Response::new(pb::ListSessionsResponse {
            sessions: list.into_iter().map(session_info).collect(),
        }))
    }

    async fn topic_session(
        &self,
        req: Request<pb::TopicSessionRequest>,
    ) -> RpcResult<pb::TopicSessionResponse> {
        let req = req.into_inner();
        let (info, created) = self
            .agent
            .sessions()
            .for_topic(req.thread_id, req.name.as_deref())
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::TopicSessionResponse {
            session: Some(session_info(info)),
            created,
        }))
    }

    async fn resume_session(
        &self,
        req: Request<pb::ResumeSessionRequest>,
    ) -> RpcResult<pb::ResumeSessionResponse> {
        let req = req.into_inner();
        let sessions = self.agent.sessions();
        let info = match req.thread_id {
            Some(thread) => {
                let (info, earlier) = sessions
                    .resume_in_topic(req.number, thread)
                    .await
                    .map_err(to_status)?;
                // The topic's earlier session, never used, does not stay in `/history`.
                if let Some(earlier) = earlier
                    && self.agent.turns().running(earlier).is_none()
                {
                    sessions.drop_if_empty(earlier).await.map_err(to_status)?;
                }
                info
            }
            None => sessions.resume(req.number).await.map_err(to_status)?,
        };
        Ok(Response::new(pb::ResumeSessionResponse {
            session: Some(session_info(info)),
        }))
    }

    async fn delete_sessions(
        &self,
        req: Request<pb::DeleteSessionsRequest>,
    ) -> RpcResult<pb::DeleteSessionsResponse> {
        let (deleted, fresh) = self
            .agent
            .sessions()
            .delete(&req.into_inner().numbers)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::DeleteSessionsResponse {
            deleted: u32::try_from(deleted).unwrap_or(u32::MAX),
            new_current: fresh.map(session_info),
        }))
    }

    async fn retitle_session(
        &self,
        req: Request<pb::RetitleSessionRequest>,
    ) -> RpcResult<pb::RetitleSessionResponse> {
        let req = req.into_inner();
        let info = self
            .agent
            .titler()
            .retitle(req.number, req.thread_id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::RetitleSessionResponse {
            session: Some(session_info(info)),
        }))
    }

    async fn list_providers(
        &self,
        _req: Request<pb::ListProvidersRequest>,
    ) -> RpcResult<pb::ListProvidersResponse> {
        let (list, current) = self.agent.models().list();
        Ok(Response::new(convert::providers(list, current)))
    }

    async fn select_provider(
        &self,
        req: Request<pb::SelectProviderRequest>,
    ) -> RpcResult<pb::SelectProviderResponse> {
        let name = req.into_inner().name;
        let s = self
            .agent
            .models()
            .select_provider(name.trim())
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SelectProviderResponse {
            provider: s.provider,
            model: s.model,
        }))
    }

    async fn select_model(
        &self,
        req: Request<pb::SelectModelRequest>,
    ) -> RpcResult<pb::SelectModelResponse> {
        let model = req.into_inner().model;
        let s = self
            .agent
            .models()
            .select_model(model.trim())
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SelectModelResponse {
            provider: s.provider,
            model: s.model,
        }))
    }

    async fn add_memory(
        &self,
        req: Request<pb::AddMemoryRequest>,
    ) -> RpcResult<pb::AddMemoryResponse> {
        self.add_memory_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_memories(
        &self,
        _req: Request<pb::ListMemoriesRequest>,
    ) -> RpcResult<pb::ListMemoriesResponse> {
        self.list_memories_rpc().await.map(Response::new)
    }

    async fn search_memories(
        &self,
        req: Request<pb::SearchMemoriesRequest>,
    ) -> RpcResult<pb::SearchMemoriesResponse> {
        self.search_memories_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn delete_memories(
        &self,
        req: Request<pb::DeleteMemoriesRequest>,
    ) -> RpcResult<pb::DeleteMemoriesResponse> {
        self.delete_memories_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn subscribe(
        &self,
        req: Request<pb::SubscribeRequest>,
    ) -> RpcResult<Self::SubscribeStream> {
        Ok(Response::new(self.subscribe_rpc(req.into_inner())))
    }

    async fn ack(&self, req: Request<pb::AckRequest>) -> RpcResult<pb::AckResponse> {
        self.ack_rpc(req.into_inner()).await.map(Response::new)
    }

    async fn set_placeholder(
        &self,
        req: Request<pb::SetPlaceholderRequest>,
    ) -> RpcResult<pb::SetPlaceholderResponse> {
        self.set_placeholder_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_skills(
        &self,
        _req: Request<pb::ListSkillsRequest>,
    ) -> RpcResult<pb::ListSkillsResponse> {
        let skills = self.agent.skills().list().await;
        Ok(Response::new(pb::ListSkillsResponse {
            skills: skills.into_iter().map(convert::skill_info).collect(),
        }))
    }

    async fn get_notes(
        &self,
        req: Request<pb::GetNotesRequest>,
    ) -> RpcResult<pb::GetNotesResponse> {
        self.get_notes_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn steer(&self, req: Request<pb::SteerRequest>) -> RpcResult<pb::SteerResponse> {
        self.steer_turn(req.into_inner()).await.map(Response::new)
    }

    async fn queue_next(
        &self,
        req: Request<pb::QueueNextRequest>,
    ) -> RpcResult<pb::QueueNextResponse> {
        self.queue_next_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_schedules(
        &self,
        _req: Request<pb::ListSchedulesRequest>,
    ) -> RpcResult<pb::ListSchedulesResponse> {
        self.list_schedules_rpc().await.map(Response::new)
    }

    async fn add_schedule(
        &self,
        req: Request<pb::AddScheduleRequest>,
    ) -> RpcResult<pb::AddScheduleResponse> {
        self.add_schedule_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn delete_schedules(
        &self,
        req: Request<pb::DeleteSchedulesRequest>,
    ) -> RpcResult<pb::DeleteSchedulesResponse> {
        self.delete_schedules_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn control_schedule(
        &self,
        req: Request<pb::ControlScheduleRequest>,
    ) -> RpcResult<pb::ControlScheduleResponse> {
        self.control_schedule_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn answer(&self, req: Request<pb::AnswerRequest>) -> RpcResult<pb::AnswerResponse> {
        Ok(Response::new(self.answer_rpc(req.into_inner())))
    }

    async fn approve(&self, req: Request<pb::ApproveRequest>) -> RpcResult<pb::ApproveResponse> {
        self.approve_rpc(req.into_inner()).map(Response::new)
    }

    async fn compact(&self, _req: Request<pb::CompactRequest>) -> RpcResult<pb::CompactResponse> {
        let c = self.agent.turns().compact().await.map_err(to_status)?;
        Ok(Response::new(pb::CompactResponse {
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summary_rounds: c.summary_rounds,
        }))
    }

    async fn doctor(&self, _req: Request<pb::DoctorRequest>) -> RpcResult<pb::DoctorResponse> {
        let report = crate::doctor::run(&self.config, false).await;
        let checks = report
            .checks
            .iter()
            .map(|c| pb::DoctorCheck {
                verdict: match c.verdict {
                    crate::doctor::Verdict::Ok => DoctorVerdict::Ok,
                    crate::doctor::Verdict::Warn => DoctorVerdict::Warn,
                    crate::doctor::Verdict::Fail => DoctorVerdict::Fail,
                }
                .as_str()
                .to_owned(),
                name: c.name.clone(),
                detail: c.detail.clone(),
                fix: c.fix.clone().unwrap_or_default(),
            })
            .collect();
        Ok(Response::new(pb::DoctorResponse {
            checks,
            failed: report.failed(),
            text: crate::doctor::render(&report, self.config.general.locale),
        }))
    }

    async fn get_usage(
        &self,
        _req: Request<pb::GetUsageRequest>,
    ) -> RpcResult<pb::GetUsageResponse> {
        let session = self
            .agent
            .sessions()
            .current_info()
            .await
            .map_err(to_status)?
            .map(|s| s.id);
        let report = self
            .agent
            .usage()
            .report(session)
            .await
            .map_err(|e| to_status(crate::error::ApiError::internal(e)))?;
        let mut reply = convert::usage_report(report);
        self.add_budget_to_usage(&mut reply).await?;
        Ok(Response::new(reply))
    }

    async fn list_jobs(
        &self,
        _req: Request<pb::ListJobsRequest>,
    ) -> RpcResult<pb::ListJobsResponse> {
        self.list_jobs_rpc().await.map(Response::new)
    }

    async fn cancel_job(
        &self,
        req: Request<pb::CancelJobRequest>,
    ) -> RpcResult<pb::CancelJobResponse> {
        self.cancel_job_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn rerun_turn(
        &self,
        req: Request<pb::RerunTurnRequest>,
    ) -> RpcResult<pb::RerunTurnResponse> {
        self.rerun_turn_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_memories_page(
        &self,
        req: Request<pb::ListMemoriesPageRequest>,
    ) -> RpcResult<pb::ListMemoriesPageResponse> {
        self.list_memories_page_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn undo_consolidation(
        &self,
        req: Request<pb::UndoConsolidationRequest>,
    ) -> RpcResult<pb::UndoConsolidationResponse> {
        self.undo_consolidation_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn decide_memory_proposal(
        &self,
        req: Request<pb::DecideMemoryProposalRequest>,
    ) -> RpcResult<pb::DecideMemoryProposalResponse> {
        self.decide_memory_proposal_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn grant_budget_override(
        &self,
        req: Request<pb::GrantBudgetOverrideRequest>,
    ) -> RpcResult<pb::GrantBudgetOverrideResponse> {
        self.grant_budget_override_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn create_web_login(
        &self,
        _req: Request<pb::CreateWebLoginRequest>,
    ) -> RpcResult<pb::CreateWebLoginResponse> {
        self.create_web_login_rpc().map(Response::new)
    }

    async fn redeem_web_login(
        &self,
        req: Request<pb::RedeemWebLoginRequest>,
    ) -> RpcResult<pb::RedeemWebLoginResponse> {
        self.redeem_web_login_rpc(req.into_inner())
            .map(Response::new)
    }

    async fn check_web_session(
        &self,
        req: Request<pb::CheckWebSessionRequest>,
    ) -> RpcResult<pb::CheckWebSessionResponse> {
        self.check_web_session_rpc(req.into_inner())
            .map(Response::new)
    }

    async fn get_usage_history(
        &self,
        req: Request<pb::GetUsageHistoryRequest>,
    ) -> RpcResult<pb::GetUsageHistoryResponse> {
        self.get_usage_history_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn get_session_history(
        &self,
        req: Request<pb::GetSessionHistoryRequest>,
    ) -> RpcResult<pb::GetSessionHistoryResponse> {
        self.get_session_history_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn search_sessions(
        &self,
        req: Request<pb::SearchSessionsRequest>,
    ) -> RpcResult<pb::SearchSessionsResponse> {
        self.search_sessions_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn rename_session(
        &self,
        req: Request<pb::RenameSessionRequest>,
    ) -> RpcResult<pb::RenameSessionResponse> {
        self.rename_session_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn browse_memories(
        &self,
        req: Request<pb::BrowseMemoriesRequest>,
    ) -> RpcResult<pb::BrowseMemoriesResponse> {
        self.browse_memories_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn edit_memory(
        &self,
        req: Request<pb::EditMemoryRequest>,
    ) -> RpcResult<pb::EditMemoryResponse> {
        self.edit_memory_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn edit_message(
        &self,
        req: Request<pb::EditMessageRequest>,
    ) -> RpcResult<pb::EditMessageResponse> {
        self.edit_message_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn retry(&self, req: Request<pb::RetryRequest>) -> RpcResult<pb::RetryResponse> {
        self.retry_rpc(req.into_inner()).await.map(Response::new)
    }

    async fn set_feedback(
        &self,
        req: Request<pb::SetFeedbackRequest>,
    ) -> RpcResult<pb::SetFeedbackResponse> {
        self.set_feedback_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn search_history(
        &self,
        req: Request<pb::SearchHistoryRequest>,
    ) -> RpcResult<pb::SearchHistoryResponse> {
        self.search_history_rpc(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn resume_session_by_id(
        &self,
        req: Request<pb::ResumeSessionByIdRequest>,
    ) -> RpcResult<pb::ResumeSessionResponse> {
        let info = self
            .agent
            .sessions()
            .resume_id(req.into_inner().session_id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::ResumeSessionResponse {
            session: Some(session_info(info)),
        }))
    }
}
