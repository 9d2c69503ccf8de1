//! A button press (an admitted callback query, see `gate::admit_press`): the Stop button
//! cancels its own turn (the same `Cancel` as `/cancel`, for that turn only), an option answers
//! the pending question (`Answer`), an approval button answers its approval (`Approve`; one
//! agentd no longer has pending — answered, expired, forged — gets a toast and changes nothing).
//! Every press is answered (`answerCallbackQuery`): a stale one
//! — its turn ended, its question closed — with a short toast. The question's buttons are
//! removed by `delivery` when agentd says the question closed.

use kernel_proto::v1 as pb;
use teloxide::types::CallbackQuery;

use crate::agentd::is_transport_failure;
use crate::buttons::{self, ApprovalPress, Press};
use crate::handle::App;

/// Handles one admitted press.
pub async fn handle(app: App, press: CallbackQuery) {
    let texts = app.texts();
    let parsed = press.data.as_deref().and_then(buttons::parse);
    let toast = match parsed {
        None => Some(texts.question_stale()),
        Some(press) => match call(&app, press).await {
            Ok(toast) => toast,
            Err(status) => {
                tracing::warn!(code = ?status.code(), "a button press could not reach kernel-agentd");
                if is_transport_failure(&status) {
                    app.agentd().lost();
                }
                Some(texts.agentd_unavailable())
            }
        },
    };
    if let Err(e) = app.telegram().answer_callback(&press.id.0, toast).await {
        tracing::debug!(error = %e, "answerCallbackQuery failed");
    }
}

/// Runs the press's RPC; the toast to show (`None`: just stop the spinner).
async fn call(app: &App, press: Press) -> Result<Option<&'static str>, tonic::Status> {
    let texts = app.texts();
    let mut client = app
        .agentd()
        .client()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    Ok(match press {
        Press::Stop { turn_id } => {
            let request = pb::CancelRequest {
                clear_queue: false,
                turn_id,
            };
            let reply = client.cancel(request).await?.into_inner();
            tracing::info!(cancelled = reply.cancelled, "Stop button pressed");
            Some(if reply.cancelled {
                texts.stop_done()
            } else {
                texts.stop_stale()
            })
        }
        Press::Option { question_id, index } => {
            let request = pb::AnswerRequest {
                question_id,
                option: Some(index),
                text: String::new(),
            };
            let reply = client.answer(request).await?.into_inner();
            tracing::info!(accepted = reply.accepted, "answer button pressed");
            Some(if reply.accepted {
                texts.question_answered()
            } else {
                texts.question_stale()
            })
        }
        Press::Approve {
            approval_id,
            decision,
        } => {
            use pb::ApprovalDecision as D;
            let decision = match decision {
                ApprovalPress::Once => D::AllowOnce,
                ApprovalPress::Session => D::AllowSession,
                ApprovalPress::Deny => D::Deny,
            };
            let request = pb::ApproveRequest {
                approval_id,
                decision: decision.into(),
            };
            match client.approve(request).await {
                Ok(_) => {
                    tracing::info!(?decision, "approval button pressed");
                    Some(texts.approval_recorded())
                }
                Err(status) if status.code() == tonic::Code::NotFound => {
                    tracing::info!("a press on an approval no longer pending");
                    Some(texts.approval_stale())
                }
                Err(status) => return Err(status),
            }
        }
    })
}
