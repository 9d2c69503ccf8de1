//! `/steer`: the owner's text for the running turn, taken at its next step boundary (see
//! `run::Turn::run_tools`); with no turn running it starts one of its own. A text that carried
//! outside content (a `/steer` replying to a forward, or to a message that carried some)
//! keeps its mark: the turn that takes it is outside content from then on.

use super::{IntakeKeys, OwnerDelivery, Scope, TurnEvents, Turns, UserInput};
use crate::error::ApiError;

/// What became of a steer.
#[derive(Debug)]
pub enum Steered {
    /// The running turn takes the text at its next step boundary.
    Running,
    /// No turn was running: the text started this one.
    Started(TurnEvents),
}

impl Turns {
    /// Hands `text` to the running turn, or runs it as a new owner turn when none runs.
    /// Empty or over-long text is refused like a message.
    pub async fn steer(
        &self,
        text: String,
        delivery: Option<OwnerDelivery>,
    ) -> Result<Steered, ApiError> {
        self.steer_in(None, UserInput::text(text), delivery).await
    }

    /// [`Turns::steer`] for the turn of session `session_id` (`None`: the main lane's), with
    /// `input`'s outside-content mark (its own, or that of a message it replies to).
    pub async fn steer_in(
        &self,
        session_id: Option<i64>,
        input: UserInput,
        delivery: Option<OwnerDelivery>,
    ) -> Result<Steered, ApiError> {
        let lane = self.lane(session_id).await?;
        let scope = match session_id {
            Some(id) => Scope::Session(id),
            None => Scope::Main,
        };
        let media = &self.inner.media;
        let input = self.mark_reply_to_outside(input).await?;
        let mut text = input.text.clone();
        let accepted = input.accept(media.locale(), false)?;
        let outside = accepted.outside_content;
        // A turn may end or start between the two steps; retried until one of them holds.
        loop {
            text = match self.inner.gate.steer(scope, text, outside) {
                Ok(()) => {
                    tracing::info!("steer handed to the running turn");
                    return Ok(Steered::Running);
                }
                Err(text) => text,
            };
            if let Ok(events) = self
                .try_start(lane, accepted.clone(), delivery, IntakeKeys::default())
                .await?
            {
                tracing::info!("no turn was running: the steer starts one");
                return Ok(Steered::Started(events));
            }
        }
    }
}
