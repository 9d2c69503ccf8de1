//! An owner's edit of a message Kernel took (`EditMessage`): while the turn that carries it
//! runs, before any tool ran, the turn restarts with the new text (`run::restart`); after a
//! tool ran, the new text reaches the model as a steer before its next step. Once that turn
//! ended nothing runs unless asked (`run`: the owner pressed "Answer the edited message"). A
//! message still waiting in the `/next` queue takes the new text there. An answered message's
//! edit is recorded (`store::edit_offers`): the press answers the newest text recorded, so the
//! offer outlives a client restart.
//! Everything is keyed on the message's session and that session's running turn
//! (`live::LiveTurns`), so it stays the same once turns run per session.

use kernel_common::config::Locale;

use super::gate::Scope;
use super::{IntakeKeys, OwnerDelivery, TurnEvent, Turns, UserInput};
use crate::error::ApiError;

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    /// The running turn `turn_id` restarts with the new text.
    Restarted { turn_id: String },
    /// The running turn `turn_id` takes the new text as a steer.
    Steered { turn_id: String },
    /// The turn that carried the message ended; nothing ran. The edit is recorded; the chat
    /// message offering it, when a client said.
    Answered { offer_message_id: Option<i64> },
    /// A new turn `turn_id` answers the edited message.
    Started { turn_id: String },
    /// Another turn runs; nothing changed.
    Busy,
    /// The message still waits in the `/next` queue: its text there was replaced.
    ReplacedWaiting,
}

/// An edit of the owner's message.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    /// The session the message belongs to (`None`: the current one).
    pub session_id: Option<i64>,
    /// Its idempotency key as `Chat` took it (empty: the session's last owner message).
    pub key: String,
    /// The new text (empty with `run` and a key: the pending edit recorded for the key).
    pub text: String,
    /// With an ended turn: answer the edited message in a new turn.
    pub run: bool,
    pub delivery: Option<OwnerDelivery>,
    /// The chat message offering to answer this edit (recorded with it).
    pub offer_message_id: Option<i64>,
}

/// The steer an edit after a tool becomes (the owner's language).
pub(super) fn edited_to(locale: Locale, text: &str) -> String {
    match locale {
        Locale::Zh => format!("主人把消息改成了：{text}"),
        Locale::En => format!("the owner edited their message to: {text}"),
    }
}

impl Turns {
    /// Applies the owner's `edit` (see the module doc). An empty text is refused
    /// (`InvalidArgument`); a message Kernel never took, or one of another session, is
    /// refused (`NotFound`) and nothing runs.
    pub async fn edit_message(&self, edit: Edit) -> Result<Edited, ApiError> {
        let inner = &self.inner;
        let mut text = edit.text.trim().to_owned();
        let mut recorded_session = None;
        if text.is_empty() && edit.run && !edit.key.is_empty() {
            // An offer's button: the pending edit recorded for the message.
            let Some(offer) = inner
                .store
                .edit_offer(&edit.key)
                .await
                .map_err(ApiError::internal)?
            else {
                return Err(ApiError::NotFound(
                    "no pending edit of that message (answered already, or older than a week)"
                        .to_owned(),
                ));
            };
            text = offer.text;
            recorded_session = Some(offer.session_id);
        }
        if text.is_empty() {
            return Err(ApiError::InvalidArgument(
                "the edit empties the message: nothing to answer, the edit is ignored".to_owned(),
            ));
        }
        let locale = inner.media.locale();
        let accepted = UserInput::text(text.clone()).accept(locale, false)?;
        if !edit.key.is_empty() {
            IntakeKeys::parse(vec![edit.key.clone()])?;
        }
        if !edit.key.is_empty()
            && inner
                .store
                .replace_follow_up(&edit.key, &text)
                .await
                .map_err(ApiError::internal)?
        {
            tracing::info!("the owner edited a message waiting in the /next queue");
            return Ok(Edited::ReplacedWaiting);
        }
        let current = inner.sessions.current().await?;
        // Without a session named, the message's own (a Telegram topic's message: its topic's).
        let keyed = match edit.session_id.or(recorded_session) {
            None if !edit.key.is_empty() => self.session_of_key(&edit.key).await?,
            named => named,
        };
        let session_id = keyed.unwrap_or(current.id);
        if let Some(found) = inner.live.find(session_id, &edit.key) {
            if !found.tool_ran && inner.live.restart(&found.turn_id, text.clone()) {
                if inner.gate.cancel_turn(&found.turn_id) {
                    tracing::info!(turn = %found.turn_id, "the owner edited the running turn's message: it restarts");
                    return Ok(Edited::Restarted {
                        turn_id: found.turn_id,
                    });
                }
                // It ended meanwhile: the restart text is never taken; the edit is an answered one.
                inner.live.end(&found.turn_id);
            } else if inner
                .gate
                .steer(Scope::Session(session_id), edited_to(locale, &text), false)
                .is_ok()
            {
                tracing::info!(turn = %found.turn_id, "the owner edited the running turn's message: a steer");
                return Ok(Edited::Steered {
                    turn_id: found.turn_id,
                });
            }
        }
        self.taken_in(session_id, &edit.key).await?;
        if !edit.run {
            let offer_message_id = match edit.key.as_str() {
                "" => None,
                key => inner
                    .store
                    .save_edit_offer(key, session_id, &text, edit.offer_message_id)
                    .await
                    .map_err(ApiError::internal)?,
            };
            return Ok(Edited::Answered { offer_message_id });
        }
        let (_, lane) = self
            .owner_lane(
                Some(session_id),
                "the message is in another session: resume it to answer the edit",
            )
            .await?;
        match self
            .try_start(lane, accepted, edit.delivery, IntakeKeys::default())
            .await?
        {
            Ok(mut events) => {
                let turn_id = match events.recv().await {
                    Some(TurnEvent::Started { turn_id, .. }) => turn_id,
                    _ => String::new(),
                };
                if !edit.key.is_empty()
                    && let Err(e) = inner.store.drop_edit_offer(&edit.key).await
                {
                    tracing::warn!(error = %e, "an answered edit offer could not be forgotten");
                }
                tracing::info!(turn = %turn_id, "the edited message is answered");
                Ok(Edited::Started { turn_id })
            }
            Err(_busy) => Ok(Edited::Busy),
        }
    }

    /// The session whose turn took the owner's message `key`, if one did.
    async fn session_of_key(&self, key: &str) -> Result<Option<i64>, ApiError> {
        let taken = self
            .inner
            .store
            .taken_keys(&[key.to_owned()])
            .await
            .map_err(ApiError::internal)?;
        Ok(taken.and_then(|t| session_of_turn(&t.turn_id)))
    }

    /// Refuses an edit of a message session `session_id` never took (`NotFound`).
    async fn taken_in(&self, session_id: i64, key: &str) -> Result<(), ApiError> {
        let store = &self.inner.store;
        if key.is_empty() {
            return match store
                .last_round_start(session_id)
                .await
                .map_err(ApiError::internal)?
            {
                Some(_) => Ok(()),
                None => Err(ApiError::NotFound(
                    "the session has no message of the owner to edit".to_owned(),
                )),
            };
        }
        let taken = store
            .taken_keys(&[key.to_owned()])
            .await
            .map_err(ApiError::internal)?;
        let Some(taken) = taken else {
            return Err(ApiError::NotFound(
                "Kernel never took that message (or forgot it: keys are kept a week)".to_owned(),
            ));
        };
        if session_of_turn(&taken.turn_id).is_some_and(|s| s != session_id) {
            return Err(ApiError::NotFound(
                "that message belongs to another session".to_owned(),
            ));
        }
        Ok(())
    }
}

/// The session of turn `turn_id`: a turn id starts with its session's id (`run::Turn::new`).
fn session_of_turn(turn_id: &str) -> Option<i64> {
    turn_id
        .split_once('-')
        .and_then(|(s, _)| s.parse::<i64>().ok())
}
