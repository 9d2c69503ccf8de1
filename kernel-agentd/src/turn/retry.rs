//! `/retry`: the session's last owner message runs again, on the current model or another one,
//! and the new try replaces the old round in the session's history (the model's next request
//! carries only the newest try; the usage ledger keeps the calls of both). It runs the message
//! as its turn did: in full (not the slimmed stored copy) and with its outside-content mark. Keyed on a session
//! and that session's gate: the current session, or a Telegram topic's session (its lane); with
//! `resume`, another session too, which becomes the current one once the retry is admitted (a 👎
//! on the last answer of a session the owner left).

use super::gate::Lane;
use super::input::Accepted;
use super::{IntakeKeys, TurnEvent, Turns, media};
use crate::error::ApiError;
use crate::models::CurrentModel;
use crate::outbox::OwnerDelivery;

/// What [`Turns::retry`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retried {
    /// The message runs again as turn `turn_id` on `model` (`provider/model`).
    Started { turn_id: String, model: String },
    /// Another turn runs; nothing changed.
    Busy,
}

impl Turns {
    /// Runs session `session_id`'s (`None`: the current session's) last owner message again on
    /// `model` (`provider/model`, or a model of the current provider; `None`: the current
    /// model), its outcome going to `delivery`. The old round is dropped from the history once
    /// the new turn is admitted, never before: a busy refusal changes nothing. With `resume`, a
    /// session that is neither current nor a topic's becomes the current one once admitted
    /// (without it, such a session is refused).
    pub async fn retry(
        &self,
        session_id: Option<i64>,
        model: Option<&str>,
        delivery: Option<OwnerDelivery>,
        resume: bool,
    ) -> Result<Retried, ApiError> {
        let inner = &self.inner;
        let model = match model.map(str::trim).filter(|m| !m.is_empty()) {
            Some(spec) => Some(self.retry_model(spec)?),
            None => None,
        };
        let refusal = "only the current session's (or a topic's) last message can run again \
                       (resume that session first)";
        let (session_id, lane, resumed) =
            match (self.owner_lane(session_id, refusal).await, session_id) {
                (Ok((id, lane)), _) => (id, lane, false),
                (Err(ApiError::FailedPrecondition(_)), Some(id))
                    if inner.sessions.by_id(id).await?.is_none() =>
                {
                    return Err(ApiError::NotFound("no session with that id".to_owned()));
                }
                // Another session's: it runs in the main lane, as the current one once admitted.
                (Err(ApiError::FailedPrecondition(_)), Some(id)) if resume => {
                    (id, Lane::main(id), true)
                }
                (Err(e), _) => return Err(e),
            };
        let nothing = || {
            ApiError::FailedPrecondition(
                "nothing to retry: the session has no message of the owner to run again".to_owned(),
            )
        };
        let Some(last) = inner
            .store
            .last_round_start(session_id)
            .await
            .map_err(ApiError::internal)?
        else {
            return Err(nothing());
        };
        // The message as its turn ran it (images, documents and transcripts in full), as
        // trusted as it was; without that record (a turn from before it was kept, or one
        // started over gRPC without a stored turn) the stored, slimmed message counts as
        // outside content, the safe side.
        let kept = inner
            .store
            .retry_input(session_id, &last)
            .await
            .map_err(ApiError::internal)?;
        let accepted = match kept {
            Some(kept) => Accepted::again(kept.message, kept.outside_content, kept.voice_reply),
            None => Accepted::again(last.message.clone(), true, false),
        };
        let Some(accepted) = accepted else {
            return Err(nothing());
        };
        let images = inner.models.images(model.as_ref().map(|m| m.name.as_str()));
        let accepted = match images {
            Some((kind, limits)) => media::fit_for_provider(accepted, kind, limits)
                .await
                .map_err(|r| r.into_error(inner.media.locale()))?,
            None => accepted,
        };
        self.refuse_over_budget(None, None).await?;
        let cancel = inner.root.child_token();
        let Ok(permit) = inner.gate.try_enter(lane, cancel.clone()) else {
            return Ok(Retried::Busy);
        };
        // Under the gate: the round is still the last one (no other turn ran since).
        let still = inner
            .store
            .last_round_start(session_id)
            .await
            .map_err(ApiError::internal)?;
        if still.as_ref().map(|m| m.id) != Some(last.id) {
            return Err(nothing());
        }
        if resumed {
            inner.sessions.resume_id(session_id).await?;
        }
        let shown_model = match &model {
            Some(m) => format!("{}/{}", m.name, m.model),
            None => {
                let m = inner.models.current()?;
                format!("{}/{}", m.name, m.model)
            }
        };
        let dropped = inner
            .store
            .drop_round_from(session_id, last.ordinal)
            .await
            .map_err(ApiError::internal)?;
        let mut events = self
            .start(
                permit,
                cancel,
                accepted,
                delivery,
                IntakeKeys::default(),
                model,
            )
            .await?;
        let turn_id = match events.recv().await {
            Some(TurnEvent::Started { turn_id, .. }) => turn_id,
            _ => String::new(),
        };
        tracing::info!(session = session_id, dropped, turn = %turn_id, model = %shown_model, "the last message runs again");
        Ok(Retried::Started {
            turn_id,
            model: shown_model,
        })
    }

    /// The session `session_id` names (`None`: the current one) and its lane, for a turn the
    /// owner asks for again (a retry, an edit's answer): the current session (the main lane) or
    /// a Telegram topic's session (its own lane, as its messages run). Another session is
    /// refused with `refusal` (`FailedPrecondition`).
    pub(super) async fn owner_lane(
        &self,
        session_id: Option<i64>,
        refusal: &str,
    ) -> Result<(i64, Lane), ApiError> {
        let sessions = &self.inner.sessions;
        match session_id {
            // Right after a restart no session is current yet: the latest one's last message
            // is still the one to run again (its round and `retry_inputs` are in the database).
            None => {
                let current = sessions.current_or_latest().await?;
                Ok((current.id, Lane::main(current.id)))
            }
            Some(id) if sessions.current_id() == Some(id) => Ok((id, Lane::main(id))),
            Some(id) if sessions.topic_of(id).await?.is_some() => Ok((id, Lane::session(id))),
            Some(_) => Err(ApiError::FailedPrecondition(refusal.to_owned())),
        }
    }

    /// The model `/retry <spec>` names: `provider/model`, a provider (its default model), or a
    /// model of the current provider.
    fn retry_model(&self, spec: &str) -> Result<CurrentModel, ApiError> {
        let models = &self.inner.models;
        match models.named(spec) {
            Ok(model) => Ok(model),
            Err(reason) => {
                if !spec.contains('/')
                    && let Ok(current) = models.current()
                    && let Ok(model) = models.named(&format!("{}/{spec}", current.name))
                {
                    return Ok(model);
                }
                Err(ApiError::InvalidArgument(reason))
            }
        }
    }
}
