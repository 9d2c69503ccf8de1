//! The `Chat` and `Cancel` RPC bodies: proto ⇄ domain for turns.

use futures::StreamExt as _;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Status;

use super::{AgentService, to_status};
use crate::conversation::Usage;
use crate::failure::FailReason;
use crate::outbox::OwnerDelivery;
use crate::turn::{
    Attachment, IntakeKeys, Rerun, Scope, SpeechStage, Steered, TurnEvent, UserInput,
};

/// The stream `Chat` returns.
pub(super) type ChatStream =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<pb::ChatEvent, Status>> + Send + 'static>>;

impl AgentService {
    /// Starts a turn and streams its events (a single `busy` event when another turn runs).
    pub(super) async fn chat_events(&self, mut req: pb::ChatRequest) -> Result<ChatStream, Status> {
        let keys =
            IntakeKeys::parse(std::mem::take(&mut req.idempotency_keys)).map_err(to_status)?;
        let delivery = req.deliver_to_owner.map(|d| OwnerDelivery {
            reply_to: d.reply_to_message_id,
            placeholder: d.placeholder_message_id,
            thread_id: d.thread_id,
        });
        let session_id = req.session_id;
        let events = self
            .agent
            .turns()
            .chat_in(session_id, user_input(req), delivery, keys)
            .await
            .map_err(to_status)?;
        Ok(Box::pin(
            UnboundedReceiverStream::new(events).map(|e| Ok(chat_event(e))),
        ))
    }

    /// Cancels the running turn (or only `turn_id`), if any, naming the CLI delegation it
    /// kills; with `clear_queue` the `/next` queue is emptied too.
    pub(super) async fn cancel_turn(
        &self,
        req: pb::CancelRequest,
    ) -> Result<pb::CancelResponse, Status> {
        let turns = self.agent.turns();
        // The queue goes first: once the turn ends, its runner would start the next item.
        let cleared = if req.clear_queue {
            turns.clear_queue().await.map_err(to_status)?
        } else {
            0
        };
        // A background job's CLI is not the turn's: cancelling the turn leaves it running.
        let running_cli = self.agent.delegator().running().filter(|c| !c.background);
        let cancelled = match (&req.turn_id, req.session_id, req.main_only) {
            (Some(turn_id), _, _) => turns.cancel_turn(turn_id),
            (None, Some(session_id), _) => turns.cancel_in(Scope::Session(session_id)) > 0,
            (None, None, true) => turns.cancel_in(Scope::Main) > 0,
            (None, None, false) => turns.cancel(),
        };
        let queued = turns.queued().await.map_err(to_status)?.len();
        Ok(pb::CancelResponse {
            cancelled,
            killed_cli: running_cli.filter(|_| cancelled).map(|c| c.name),
            queued: u32::try_from(queued).unwrap_or(u32::MAX),
            cleared: u32::try_from(cleared).unwrap_or(u32::MAX),
        })
    }

    /// `Steer`: the running turn takes the text, or it starts a turn of its own.
    pub(super) async fn steer_turn(
        &self,
        req: pb::SteerRequest,
    ) -> Result<pb::SteerResponse, Status> {
        let delivery = req.deliver_to_owner.map(|d| OwnerDelivery {
            reply_to: d.reply_to_message_id,
            placeholder: d.placeholder_message_id,
            thread_id: d.thread_id,
        });
        let steered = self
            .agent
            .turns()
            .steer_in(
                req.session_id,
                UserInput {
                    outside_content: req.outside_content,
                    replied_to: req.replied_to_message_ids,
                    ..UserInput::text(req.text)
                },
                delivery,
            )
            .await
            .map_err(to_status)?;
        Ok(pb::SteerResponse {
            steered: matches!(steered, Steered::Running),
        })
    }

    /// `QueueNext`: queues the text for after the running turn.
    pub(super) async fn queue_next_rpc(
        &self,
        req: pb::QueueNextRequest,
    ) -> Result<pb::QueueNextResponse, Status> {
        let position = self
            .agent
            .turns()
            .queue_next(
                req.text,
                req.reply_to_message_id,
                req.session_id,
                req.message_key,
            )
            .await
            .map_err(to_status)?;
        Ok(pb::QueueNextResponse {
            position: u32::try_from(position).unwrap_or(u32::MAX),
        })
    }

    /// `RerunTurn`: runs a cut-off turn's message again (NOT_FOUND for a stale or forged id).
    pub(super) async fn rerun_turn_rpc(
        &self,
        req: pb::RerunTurnRequest,
    ) -> Result<pb::RerunTurnResponse, Status> {
        let rerun = self
            .agent
            .turns()
            .rerun(&req.turn_id)
            .await
            .map_err(to_status)?;
        Ok(match rerun {
            Rerun::Started { turn_id } => pb::RerunTurnResponse {
                turn_id,
                busy: false,
            },
            Rerun::Busy => pb::RerunTurnResponse {
                turn_id: String::new(),
                busy: true,
            },
        })
    }

    /// `Answer`: answers the pending question (false when stale).
    pub(super) fn answer_rpc(&self, req: pb::AnswerRequest) -> pb::AnswerResponse {
        let accepted = self
            .agent
            .turns()
            .asks()
            .answer(&req.question_id, req.option, &req.text);
        pb::AnswerResponse { accepted }
    }
}

fn user_input(req: pb::ChatRequest) -> UserInput {
    use pb::attachment::Kind;
    let attachments = req
        .attachments
        .into_iter()
        .map(|a| match a.kind {
            Some(Kind::Image(i)) => Attachment::Image {
                mime_type: i.mime_type,
                data: i.data,
            },
            Some(Kind::Document(d)) => Attachment::Document {
                file_name: d.file_name,
                data: d.data,
            },
            Some(Kind::Voice(v)) => Attachment::Voice {
                mime_type: v.mime_type,
                data: v.data,
            },
            None => Attachment::Empty,
        })
        .collect();
    UserInput {
        text: req.text,
        attachments,
        want_voice_reply: req.want_voice_reply,
        outside_content: req.outside_content,
        replied_to: req.replied_to_message_ids,
    }
}

/// A turn event for the wire.
pub(super) fn chat_event(event: TurnEvent) -> pb::ChatEvent {
    let event = match event {
        TurnEvent::Started {
            session_id,
            turn_id,
            left_out,
        } => Event::Started(pb::TurnStarted {
            session_id,
            turn_id,
            left_out,
        }),
        TurnEvent::TextDelta(text) => Event::TextDelta(pb::TextDelta { text }),
        TurnEvent::ToolStarted {
            call_id,
            tool_name,
            input_summary,
        } => Event::ToolStarted(pb::ToolStarted {
            call_id,
            tool_name,
            input_summary,
        }),
        TurnEvent::CliStarted { cli, cwd } => Event::CliStarted(pb::CliStarted { cli, cwd }),
        TurnEvent::ToolFinished {
            call_id,
            ok,
            summary,
        } => Event::ToolFinished(pb::ToolFinished {
            call_id,
            ok,
            summary,
        }),
        TurnEvent::FailedOver {
            from,
            to,
            model,
            reason,
        } => Event::FailedOver(pb::FailedOver {
            from_provider: from,
            to_provider: to,
            to_model: model,
            reason: reason.code().to_owned(),
        }),
        TurnEvent::RetryScheduled {
            provider,
            scheduled,
        } => Event::RetryScheduled(retry_scheduled_pb(provider, scheduled)),
        TurnEvent::SpeechStarted(stage) => Event::Speech(pb::SpeechStarted {
            stage: speech_stage_pb(stage).into(),
        }),
        TurnEvent::Completed {
            text,
            usage,
            voice_reply,
            reasoning,
        } => Event::Completed(pb::TurnCompleted {
            text,
            usage: Some(usage_pb(usage)),
            voice_reply,
            reasoning,
        }),
        TurnEvent::Failed { message, reason } => Event::Failed(failed_pb(message, reason)),
        TurnEvent::Cancelled => Event::Cancelled(pb::TurnCancelled {}),
        TurnEvent::Busy { first_in_window } => Event::Busy(pb::Busy { first_in_window }),
        TurnEvent::BudgetExceeded { over, day, month } => {
            Event::BudgetExceeded(budget_exceeded_pb(over, day, month))
        }
        TurnEvent::Question { id, text, options } => Event::Question(pb::Question {
            question_id: id,
            text,
            options,
        }),
        TurnEvent::QuestionClosed { id } => {
            Event::QuestionClosed(pb::QuestionClosed { question_id: id })
        }
        TurnEvent::Answered { id } => Event::Answered(pb::QuestionAnswered { question_id: id }),
        TurnEvent::ApprovalRequested(shown) => {
            Event::ApprovalRequested(super::approvals::requested_pb(shown))
        }
        TurnEvent::ApprovalClosed { id, decision } => Event::ApprovalClosed(pb::ApprovalClosed {
            approval_id: id,
            decision,
        }),
        TurnEvent::AlreadyTaken { keys, turn_id } => {
            Event::AlreadyTaken(pb::AlreadyTaken { keys, turn_id })
        }
    };
    pb::ChatEvent { event: Some(event) }
}

fn retry_scheduled_pb(
    provider: String,
    scheduled: crate::llm::retry::Scheduled,
) -> pb::RetryScheduled {
    pb::RetryScheduled {
        provider,
        reason: scheduled.reason.code().to_owned(),
        attempt: scheduled.attempt,
        max_attempts: scheduled.max_attempts,
        wait_ms: u64::try_from(scheduled.wait.as_millis()).unwrap_or(u64::MAX),
    }
}

fn failed_pb(message: String, reason: FailReason) -> pb::TurnFailed {
    pb::TurnFailed {
        message,
        reason: reason
            .reason
            .map(|r| r.as_str().to_owned())
            .unwrap_or_default(),
        args: reason.args.into_iter().collect(),
    }
}

fn budget_exceeded_pb(
    over: crate::budget::LimitState,
    day: String,
    month: String,
) -> pb::BudgetExceeded {
    pb::BudgetExceeded {
        period: over.period.as_str().to_owned(),
        provider: over.provider.unwrap_or_default(),
        spent_usd: over.spent_usd,
        limit_usd: over.limit_usd,
        day,
        month,
    }
}

fn speech_stage_pb(stage: SpeechStage) -> pb::SpeechStage {
    match stage {
        SpeechStage::Transcribing => pb::SpeechStage::Transcribing,
        SpeechStage::Synthesizing => pb::SpeechStage::Synthesizing,
    }
}

fn usage_pb(u: Usage) -> pb::Usage {
    pb::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    }
}
