//! A turn restarted by the owner's edit (`turn::edit`): the cancelled turn is forgotten (its
//! round, its keys, its running record; the usage ledger keeps the closed call) and a new turn
//! runs the edited text under the same gate permit, on the same model, answering where the old
//! one would have (the placeholder reused). Nothing of the old turn reaches the outbox.

use std::sync::atomic::Ordering;

use super::{Turn, TurnSetup};
use crate::outbox::OwnerDelivery;
use crate::turn::UserInput;

impl Turn {
    /// The turn that replaces this cancelled one, running `text` (`None`: it cannot run).
    pub(super) async fn restart(mut self, text: String) -> Option<Turn> {
        let turns = self.turns.clone();
        let inner = &turns.inner;
        let stored = self.user_stored.load(Ordering::Relaxed);
        if let Err(e) = inner
            .store
            .forget_turn(self.session_id, &self.id, stored)
            .await
        {
            tracing::error!(error = %e, "cannot forget the turn an edit restarts");
        }
        let permit = self.permit.take()?;
        let accepted = match UserInput::text(text).accept(inner.media.locale(), false) {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "the edited text cannot run");
                return None;
            }
        };
        let delivery = self.delivery.map(|d| OwnerDelivery {
            reply_to: d.reply_to,
            placeholder: d.placeholder.or(inner.outbox.placeholder(&self.id)),
            thread_id: d.thread_id,
        });
        let cancel = inner.root.child_token();
        permit.renew_cancel(cancel.clone());
        let turn = Turn::new(TurnSetup {
            turns: turns.clone(),
            permit,
            events: self.events.clone(),
            cancel,
            session_id: self.session_id,
            model: self.model.clone(),
            input: accepted,
            delivery,
            keys: std::mem::take(&mut self.keys),
        });
        tracing::info!(old = %self.id, turn = %turn.id(), "the turn restarts with the owner's edited message");
        Some(turn)
    }
}
