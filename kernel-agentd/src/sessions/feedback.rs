//! The owner's feedback on Kernel's answers (a reaction in Telegram, `SetFeedback`): stored
//! with the answer it is about, shown with it in the session's history and its export.

use super::Sessions;
use crate::error::ApiError;

/// Longest feedback kept: one reaction (an emoji may be several characters).
pub(crate) const MAX_FEEDBACK_CHARS: usize = 16;

impl Sessions {
    /// Stores `feedback` (trimmed; empty clears it) on the answer that became chat message
    /// `chat_message_id`. Too long: `InvalidArgument`; no answer Kernel delivered (or one whose
    /// delivery record is pruned): `NotFound`.
    pub(crate) async fn set_feedback(
        &self,
        chat_message_id: i64,
        feedback: &str,
    ) -> Result<(), ApiError> {
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
        if !stored {
            return Err(ApiError::NotFound(
                "that chat message is no answer Kernel delivered (or one older than a week)"
                    .to_owned(),
            ));
        }
        tracing::info!(
            chat_message_id,
            "the owner's feedback on an answer is stored"
        );
        Ok(())
    }
}
