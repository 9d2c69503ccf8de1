//! The `EditMessage`, `Retry` and `SetFeedback` RPC bodies (messages that live, issue 47):
//! proto ⇄ domain for `turn::edit` and `turn::retry`.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::outbox::OwnerDelivery;
use crate::turn::{Edit, Edited, Retried};

fn delivery(d: Option<pb::OwnerDelivery>) -> Option<OwnerDelivery> {
    d.map(|d| OwnerDelivery {
        reply_to: d.reply_to_message_id,
        placeholder: d.placeholder_message_id,
        thread_id: d.thread_id,
    })
}

impl AgentService {
    /// `EditMessage`: restart, steer, or say the turn ended (and with `run`, answer the edit).
    pub(super) async fn edit_message_rpc(
        &self,
        req: pb::EditMessageRequest,
    ) -> Result<pb::EditMessageResponse, Status> {
        use pb::edit_message_response::Outcome;
        let edited = self
            .agent
            .turns()
            .edit_message(Edit {
                session_id: req.session_id,
                key: req.message_key,
                text: req.text,
                run: req.run,
                delivery: delivery(req.deliver_to_owner),
                offer_message_id: req.offer_message_id,
            })
            .await
            .map_err(to_status)?;
        let offer_message_id = match &edited {
            Edited::Answered { offer_message_id } => *offer_message_id,
            _ => None,
        };
        let (outcome, turn_id) = match edited {
            Edited::Restarted { turn_id } => (Outcome::Restarted, turn_id),
            Edited::Steered { turn_id } => (Outcome::Steered, turn_id),
            Edited::Answered { .. } => (Outcome::Answered, String::new()),
            Edited::Started { turn_id } => (Outcome::Started, turn_id),
            Edited::Busy => (Outcome::Busy, String::new()),
            Edited::ReplacedWaiting => (Outcome::ReplacedWaiting, String::new()),
        };
        Ok(pb::EditMessageResponse {
            outcome: outcome.into(),
            turn_id,
            offer_message_id,
        })
    }

    /// `Retry`: the session's last owner message runs again (optionally on another model).
    pub(super) async fn retry_rpc(
        &self,
        req: pb::RetryRequest,
    ) -> Result<pb::RetryResponse, Status> {
        let retried = self
            .agent
            .turns()
            .retry(
                req.session_id,
                req.model.as_deref(),
                delivery(req.deliver_to_owner),
                req.resume,
            )
            .await
            .map_err(to_status)?;
        Ok(match retried {
            Retried::Started { turn_id, model } => pb::RetryResponse {
                turn_id,
                busy: false,
                model,
            },
            Retried::Busy => pb::RetryResponse {
                turn_id: String::new(),
                busy: true,
                model: String::new(),
            },
        })
    }

    /// `SetFeedback`: the owner's reaction to one of Kernel's answers, stored with it.
    pub(super) async fn set_feedback_rpc(
        &self,
        req: pb::SetFeedbackRequest,
    ) -> Result<pb::SetFeedbackResponse, Status> {
        let sessions = self.agent.sessions();
        let answer = sessions
            .set_feedback(req.chat_message_id, &req.feedback)
            .await
            .map_err(to_status)?;
        let thread_id = sessions
            .topic_of(answer.session_id)
            .await
            .map_err(to_status)?;
        Ok(pb::SetFeedbackResponse {
            session_id: answer.session_id,
            last_answer: answer.last,
            thread_id,
        })
    }
}
