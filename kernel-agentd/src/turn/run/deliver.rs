//! The turn's side of the outbox: an owner turn's progress goes to subscribers as it happens,
//! and its outcome is stored — the final answer in the same transaction as its outbox item —
//! before the last event is sent to anyone.

use super::persist::{STORE_FAILED, store_failed};
use super::{Stop, Turn};
use crate::failure::FailReason;
use crate::outbox::{ItemBody, NewItem};
use crate::turn::TurnEvent;
use crate::turn::gate::Permit;
use crate::turn::slim::slim;

impl Turn {
    /// The cost footer of the answer when `telegram.show_cost` is on: the turn's tokens and
    /// their cost at the turn's model's price (configured or shipped).
    fn cost_footer(&self) -> Option<String> {
        let inner = &self.turns.inner;
        if !inner.show_cost {
            return None;
        }
        let u = &self.usage;
        let tokens = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
        let cost = inner
            .usage
            .price(&self.model.name, &self.model.model)
            .map(|p| {
                p.cost(
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                )
            });
        Some(crate::budget::texts::cost_footer(
            inner.media.locale(),
            tokens,
            cost,
        ))
    }

    /// Shows `event` to subscribers when this is an owner turn (`Started` opens the live turn;
    /// the last events are replaced by the outbox item).
    pub(super) fn publish(&self, event: &TurnEvent) {
        (self.publisher())(event);
    }

    /// What [`Turn::publish`] does, as a closure tools can call from their own tasks.
    pub(super) fn publisher(&self) -> impl Fn(&TurnEvent) + Send + Sync + 'static {
        let outbox = self
            .delivery
            .map(|delivery| (self.turns.inner.outbox.clone(), delivery));
        let turn_id = self.id.clone();
        move |event: &TurnEvent| {
            let Some((outbox, delivery)) = &outbox else {
                return;
            };
            match event {
                TurnEvent::Started { .. } => outbox.begin_turn(&turn_id, *delivery, event.clone()),
                TurnEvent::TextDelta(_) => outbox.progress(&turn_id, event.clone(), false),
                TurnEvent::ToolStarted { .. }
                | TurnEvent::ToolFinished { .. }
                | TurnEvent::CliStarted { .. }
                | TurnEvent::Question { .. }
                | TurnEvent::QuestionClosed { .. }
                | TurnEvent::SpeechStarted(_)
                | TurnEvent::FailedOver { .. }
                | TurnEvent::RetryScheduled { .. } => {
                    outbox.progress(&turn_id, event.clone(), true)
                }
                TurnEvent::Completed { .. }
                | TurnEvent::Failed { .. }
                | TurnEvent::Cancelled
                | TurnEvent::Busy { .. }
                | TurnEvent::BudgetExceeded { .. }
                | TurnEvent::Answered { .. }
                // Approvals reach subscribers from the approvals service itself.
                | TurnEvent::ApprovalRequested(_)
                | TurnEvent::ApprovalClosed { .. }
                | TurnEvent::AlreadyTaken { .. } => {}
            }
        }
    }

    /// Stores the final answer (an owner turn's with its outbox item, in one transaction) or,
    /// for an owner turn, queues the failure or cancellation notice. A store failure becomes
    /// the turn's outcome.
    pub(super) async fn conclude(
        &mut self,
        outcome: Result<String, Stop>,
        voice_reply: Option<&[u8]>,
    ) -> Result<String, Stop> {
        let redactor = &self.turns.inner.redactor;
        let outcome = outcome.map_err(|stop| match stop {
            Stop::Failed(message, reason) => {
                Stop::Failed(redactor.redact(&message), reason.redacted(redactor))
            }
            other => other,
        });
        let answer: Vec<_> = self
            .final_message
            .take()
            .map(|m| slim(&m, |_| None))
            .into_iter()
            .collect();
        let Some(delivery) = self.delivery else {
            if !answer.is_empty() {
                self.turns
                    .inner
                    .store
                    .append_messages(self.session_id, &answer)
                    .await
                    .map_err(store_failed)?;
            }
            return outcome;
        };
        if let Err(Stop::AlreadyTaken(taken)) = &outcome {
            // Another request took the owner's messages: it owns the outcome; this turn has none.
            self.turns.inner.outbox.abandon_turn(
                &self.id,
                TurnEvent::AlreadyTaken {
                    keys: taken.keys.clone(),
                    turn_id: taken.turn_id.clone(),
                },
            );
            return outcome;
        }
        let body = match &outcome {
            Ok(text) => ItemBody::Answer {
                text: {
                    let mut shown = text.clone();
                    if let Some(why) = &self.voice_failed {
                        // The owner asked by voice: say why none came, under the answer.
                        shown.push_str("\n\n");
                        shown.push_str(why);
                    }
                    if let Some(footer) = self.cost_footer() {
                        shown.push_str(&footer);
                    }
                    shown
                },
                voice: voice_reply.map(<[u8]>::to_vec),
                reasoning: self.reasoning.clone(),
            },
            Err(Stop::Failed(message, reason)) => ItemBody::Failed {
                message: message.clone(),
                reason: reason.clone(),
            },
            Err(Stop::Cancelled | Stop::AlreadyTaken(_)) => ItemBody::Cancelled,
        };
        let item = NewItem {
            turn_id: self.id.clone(),
            body,
            reply_to: delivery.reply_to,
            placeholder: delivery.placeholder,
            thread_id: delivery.thread_id,
            outside: self.outside_content,
        };
        let ended = || TurnEvent::Failed {
            message: STORE_FAILED.to_owned(),
            reason: FailReason::store_failed(),
        };
        // From here the owner may see the outcome and answer it before the permit is dropped.
        self.with_permit(Permit::concluding);
        match self
            .turns
            .inner
            .outbox
            .commit(self.session_id, &answer, item, ended)
            .await
        {
            Ok(_) => outcome,
            Err(e) => Err(store_failed(e)),
        }
    }
}
