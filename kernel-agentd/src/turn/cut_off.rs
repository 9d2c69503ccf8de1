//! Owner turns an agentd crash cut off: at start, each turn still recorded as running
//! (`store::running_turns`) becomes an outbox item telling the owner its answer was cut off
//! (a `Failed` item with reason `TURN_CUT_OFF`; kernel-tg adds a button to run it again), and
//! [`Turns::rerun`] runs its message again, once, as a new owner turn: as the model first saw
//! it (images, documents and transcripts in full) and as trusted as it was (a forward or a
//! document still counts as outside content), through the budget gate (over a limit it is
//! refused and stays to be run later).

use super::input::Accepted;
use super::{IntakeKeys, TurnEvent, Turns};
use crate::error::ApiError;
use crate::failure::FailReason;
use crate::outbox::{ItemBody, NewItem, OwnerDelivery};
use kernel_proto::words::FailureReason;

/// The English message of a cut-off turn's item (clients say it from the reason).
const CUT_OFF_MESSAGE: &str =
    "the answer was cut off: kernel-agentd stopped before the turn ended; it can be run again";

/// What [`Turns::rerun`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rerun {
    /// The message runs again as turn `turn_id` (its outcome arrives through the outbox).
    Started { turn_id: String },
    /// Another turn runs; nothing changed.
    Busy,
}

impl Turns {
    /// Reports every owner turn an agentd crash cut off as an outbox item for the owner (call
    /// once at start, before any turn runs); how many there were.
    pub async fn report_cut_off(&self) -> Result<usize, ApiError> {
        let inner = &self.inner;
        let stored = inner
            .store
            .report_cut_off_turns(|turn| NewItem {
                turn_id: turn.turn_id.clone(),
                body: ItemBody::Failed {
                    message: CUT_OFF_MESSAGE.to_owned(),
                    reason: FailReason::new(FailureReason::TurnCutOff, &[]),
                },
                reply_to: turn.to.reply_to,
                placeholder: turn.to.placeholder,
                thread_id: None,
                outside: false,
            })
            .await
            .map_err(ApiError::internal)?;
        let count = stored.len();
        for (seq, item) in stored {
            tracing::warn!(seq, turn = %item.turn_id, "an owner turn was cut off by a crash; the owner is told");
            inner.outbox.stored(seq, item);
        }
        Ok(count)
    }

    /// Runs the message of cut-off turn `turn_id` again as a new owner turn replying where the
    /// old one would have. An unknown, forged or already re-run id is refused (`NotFound`) and
    /// changes nothing; while another turn runs, nothing changes either.
    pub async fn rerun(&self, turn_id: &str) -> Result<Rerun, ApiError> {
        let inner = &self.inner;
        let not_found = || {
            ApiError::NotFound(
                "no cut-off turn with that id (it was run again already, or never cut off)"
                    .to_owned(),
            )
        };
        if turn_id.is_empty() || turn_id.len() > 128 {
            return Err(not_found());
        }
        let Some(claimed) = inner
            .store
            .claim_rerun(turn_id)
            .await
            .map_err(ApiError::internal)?
        else {
            return Err(not_found());
        };
        let release = || async {
            if let Err(e) = inner.store.release_rerun(turn_id).await {
                tracing::error!(error = %e, "cannot give a cut-off turn back");
            }
        };
        let again = Accepted::again(
            claimed.message,
            claimed.outside_content,
            claimed.voice_reply,
        );
        let Some(accepted) = again else {
            release().await;
            let refusal = crate::media::Refusal::EmptyMessage;
            return Err(refusal.into_error(inner.media.locale()));
        };
        let accepted = match self.fits_provider(accepted).await {
            Ok(accepted) => accepted,
            Err(e) => {
                release().await;
                return Err(e);
            }
        };
        // The same gate as a new message: over a budget limit nothing runs (a typed refusal).
        if let Err(e) = self.refuse_over_budget(None, None).await {
            release().await;
            return Err(e);
        }
        // A topic's turn runs again in the topic's session (its own lane) and answers there.
        let session = claimed.thread_id.map(|_| claimed.session_id);
        let delivery = OwnerDelivery {
            reply_to: claimed.to.reply_to,
            placeholder: None,
            thread_id: claimed.thread_id,
        };
        let started = match self.lane(session).await {
            Ok(lane) => {
                self.try_start(lane, accepted, Some(delivery), IntakeKeys::default())
                    .await
            }
            Err(e) => Err(e),
        };
        let mut events = match started {
            Ok(Ok(events)) => events,
            Ok(Err(_busy)) => {
                release().await;
                return Ok(Rerun::Busy);
            }
            Err(e) => {
                release().await;
                return Err(e);
            }
        };
        if let Err(e) = inner.store.forget_rerun_input(turn_id).await {
            tracing::warn!(error = %e, "cannot drop a re-run turn's message");
        }
        let turn_id_new = match events.recv().await {
            Some(TurnEvent::Started { turn_id, .. }) => turn_id,
            _ => String::new(),
        };
        tracing::info!(cut_off = turn_id, turn = %turn_id_new, "a cut-off turn runs again");
        Ok(Rerun::Started {
            turn_id: turn_id_new,
        })
    }
}
