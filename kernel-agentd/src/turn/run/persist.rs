//! A turn's messages in the store: the owner's message with its idempotency keys and its
//! running record, each message after it slimmed, and what the owner sees when saving fails.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::{Stop, Turn};
use crate::conversation::Message;
use crate::failure::FailReason;
use crate::store::running_turns::{Destination, Running};
use crate::turn::gate::{Origin, Permit};
use crate::turn::slim::slim;

/// What the owner sees when the conversation cannot be saved (the cause is logged).
pub(super) const STORE_FAILED: &str =
    "could not save the conversation (database error); see the agent log";

impl Turn {
    /// Appends `message`, slimmed, to the session (one transaction). `tool_names` maps call ids
    /// to tool names for the results in it.
    pub(super) async fn persist(
        &self,
        message: &Message,
        tool_names: &[(&str, &str)],
    ) -> Result<(), Stop> {
        let names: HashMap<&str, &str> = tool_names.iter().copied().collect();
        let stored = slim(message, |id| names.get(id).copied());
        self.turns
            .inner
            .store
            .append_messages(self.session_id, &[stored])
            .await
            .map_err(store_failed)?;
        Ok(())
    }

    /// Stores the user message with the request's idempotency keys and, for an owner turn, its
    /// record as running (where its answer goes; the message in full when the stored one is
    /// slimmed, and how trusted it is), in one transaction: a crash before the outcome is stored
    /// leaves a trace the next start reports and can run again (`turn::cut_off`).
    pub(super) async fn persist_user(&self) -> Result<(), Stop> {
        let turns = &self.turns.inner;
        let stored = slim(&self.user, |_| None);
        let owner = self.permit.as_ref().and_then(Permit::origin) == Some(Origin::Owner);
        let running = self.delivery.filter(|_| owner).map(|d| Running {
            to: Destination {
                reply_to: d.reply_to,
                placeholder: d.placeholder.or(turns.outbox.placeholder(&self.id)),
            },
            full: (stored != self.user).then(|| self.user.clone()),
            outside_content: self.outside_content,
            voice_reply: self.want_voice_reply,
        });
        turns
            .store
            .append_user_message(
                self.session_id,
                &stored,
                &self.id,
                self.keys.as_slice(),
                running,
            )
            .await
            .map_err(store_failed)?
            .map_err(Stop::AlreadyTaken)?;
        self.user_stored.store(true, Ordering::Relaxed);
        Ok(())
    }
}

pub(super) fn store_failed(e: crate::store::StoreError) -> Stop {
    tracing::error!(error = %e, "cannot save the conversation");
    Stop::Failed(STORE_FAILED.to_owned(), FailReason::store_failed())
}
