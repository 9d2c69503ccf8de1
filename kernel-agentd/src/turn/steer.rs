//! `/steer`: the owner's text for the running turn, taken at its next step boundary (see
//! `run::Turn::run_tools`); with no turn running it starts one of its own.

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
        self.steer_in(None, text, delivery).await
    }

    /// [`Turns::steer`] for the turn of session `session_id` (`None`: the main lane's).
    pub async fn steer_in(
        &self,
        session_id: Option<i64>,
        text: String,
        delivery: Option<OwnerDelivery>,
    ) -> Result<Steered, ApiError> {
        let lane = self.lane(session_id).await?;
        let scope = match session_id {
            Some(id) => Scope::Session(id),
            None => Scope::Main,
        };
        let media = &self.inner.media;
        let accepted = UserInput::text(text.clone()).accept(media.locale(), false)?;
        let mut text = text;
        // A turn may end or start between the two steps; retried until one of them holds.
        loop {
            text = match self.inner.gate.steer(scope, text) {
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
