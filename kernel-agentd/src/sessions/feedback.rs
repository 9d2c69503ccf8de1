//! The owner's feedback on Kernel's answers (a reaction in Telegram, `SetFeedback`): stored
//! with the answer it is about, shown with it in the session's history and its export. An
//! answer of any age takes feedback (its chat messages are kept with it, not with the pruned
//! outbox row); only the session's last answer can be tried again (`last`).

use super::Sessions;
use crate::error::ApiError;
pub(crate) use crate::store::feedback::AnswerOf;

/// Longest feedback kept: one reaction (an emoji may be several characters).
pub(crate) const MAX_FEEDBACK_CHARS: usize = 16;

impl Sessions {
    /// Stores `feedback` (trimmed; empty clears it) on the answer that became chat message
    /// `chat_message_id`; the answer's session and whether it is that session's last answer.
    /// Too long: `InvalidArgument`; no answer Kernel delivered (or one since dropped by a
    /// /retry or a deleted session): `NotFound`.
    pub(crate) async fn set_feedback(
        &self,
        chat_message_id: i64,
        feedback: &str,
    ) -> Result<AnswerOf, ApiError> {
        let feedback = feedback.trim();
        if feedback.chars().count() > MAX_FEEDBACK_CHARS {
            return Err(ApiError::InvalidArgument(format!(
                "feedback is one reaction (at most {MAX_FEEDBACK_CHARS} characters)"
            )));
        }
        let stored = self
            .inner
            .store
            .set_feedback(chat_message_id, feedback)
            .await
            .map_err(ApiError::internal)?;
        let Some(answer) = stored else {
            return Err(ApiError::NotFound(
                "that chat message is no answer Kernel delivered (or one since dropped)".to_owned(),
            ));
        };
        tracing::info!(
            chat_message_id,
            "the owner's feedback on an answer is stored"
        );
        Ok(answer)
    }
}
