//! The `[budget]` in the turn loop: a new owner turn over a limit is refused before any model
//! call (through the outbox with the spend so far, or as a typed `Refusal` for a client that
//! wants no delivery); the refused message is kept (with its images and documents; a voice
//! note would need transcribing and is not), and the owner's Continue press for it
//! ([`Turns::continue_refused`]) lifts the limit and runs it once (through the `/next` queue);
//! a running turn finishes its current step and stops before the next model call; after a
//! turn's spend is recorded, the owner gets each warning now due.

use std::collections::BTreeMap;

use chrono::Utc;

use super::input::Accepted;
use super::{ApiError, FailReason, OwnerDelivery, TurnEvent, TurnEvents, Turns, single};
use crate::budget::texts::{self};
use crate::budget::{Budget, LimitState, Standing};
use crate::conversation::Block;
use crate::outbox::{ItemBody, NewItem};
use crate::refusal::Refusal;
use crate::request::slim::slim;
use crate::store::follow_ups::Kept;

/// What a Continue press did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Continued {
    /// The limits are lifted for the period.
    pub granted: bool,
    /// The refused message runs now (or right after the running turn).
    pub runs: bool,
}

/// What of `input` is kept when a budget limit refuses it: its text (placeholders for images
/// and documents) and, when it holds more, the message whole; voice notes are left out.
fn kept(input: &Accepted) -> Kept {
    let message = input.clone().into_message(Vec::new());
    let slimmed = slim(&message, |_| None);
    let text = slimmed
        .content
        .iter()
        .filter_map(|block| match block {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    Kept {
        text,
        whole: (slimmed != message).then_some(message.content),
        outside_content: input.outside_content,
    }
}

/// The failure of a turn stopped at the budget (its owner-visible reason and English message).
fn over_budget_failure(standing: &Standing, over: &LimitState) -> (String, FailReason) {
    let args: BTreeMap<String, String> = standing
        .refusal_args(over)
        .args()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    (
        texts::refusal_message(over),
        FailReason {
            reason: Some(kernel_proto::words::FailureReason::BudgetExceeded),
            args,
        },
    )
}

impl Turns {
    /// The budget service.
    pub fn budget(&self) -> &Budget {
        &self.inner.budget
    }

    /// `None` while the budget allows a new turn; else the refusal: with `delivery`, a failed
    /// outbox item for the owner (reason `BUDGET_EXCEEDED`, the spend, the override keys and —
    /// when the message `input` has something to keep — `refusal`, the id under which it
    /// is kept for a Continue press) and a single `BudgetExceeded` event; without, a
    /// `Refusal`. No model is called either way.
    pub(super) async fn refuse_over_budget(
        &self,
        delivery: Option<OwnerDelivery>,
        input: Option<&Accepted>,
    ) -> Result<Option<TurnEvents>, ApiError> {
        let Some((standing, over)) = self.inner.budget.over().await else {
            return Ok(None);
        };
        tracing::info!(
            period = over.period.as_str(),
            provider = over.provider.as_deref().unwrap_or(""),
            spent = over.spent_usd,
            limit = over.limit_usd,
            "new turn refused: a budget limit is reached"
        );
        let (message, mut reason) = over_budget_failure(&standing, &over);
        let Some(delivery) = delivery else {
            return Err(Refusal::BudgetExceeded {
                over: standing.refusal_args(&over),
                message,
            }
            .into());
        };
        let id = Utc::now().timestamp_micros().to_string();
        let kept = input
            .map(kept)
            .filter(|k| !k.text.trim().is_empty() || k.whole.is_some());
        if let Some(kept) = kept {
            self.inner
                .store
                .keep_budget_refusal(&id, &kept, delivery.reply_to)
                .await
                .map_err(ApiError::internal)?;
            reason.args.insert("refusal".to_owned(), id.clone());
        }
        let item = NewItem {
            turn_id: format!("budget-{id}"),
            body: ItemBody::Failed { message, reason },
            reply_to: delivery.reply_to,
            placeholder: delivery.placeholder,
            thread_id: delivery.thread_id,
            outside: false,
        };
        self.inner
            .outbox
            .queue(item)
            .await
            .map_err(ApiError::internal)?;
        let periods = standing.periods;
        Ok(Some(single(TurnEvent::BudgetExceeded {
            over,
            day: periods.key(crate::budget::PeriodKind::Day),
            month: periods.key(crate::budget::PeriodKind::Month),
        })))
    }

    /// The owner's Continue press for `period` (`day:…`/`month:…`) on the limit notice of
    /// refused message `refusal` (empty: a press or script naming no message): granted only for
    /// the current period and — when it names one — a refused message still kept; then that
    /// message runs, once (queued like `/next`: at once when no turn runs). A stale or forged
    /// press changes nothing.
    pub async fn continue_refused(
        &self,
        period: &str,
        refusal: &str,
    ) -> Result<Continued, ApiError> {
        let store = &self.inner.store;
        let nothing = Continued::default();
        if !refusal.is_empty()
            && (refusal.len() > 32
                || !store
                    .budget_refusal_pending(refusal)
                    .await
                    .map_err(ApiError::internal)?)
        {
            tracing::info!(
                refusal,
                "a Continue press for no kept message changes nothing"
            );
            return Ok(nothing);
        }
        if !self
            .inner
            .budget
            .grant(period)
            .await
            .map_err(ApiError::internal)?
        {
            return Ok(nothing);
        }
        if refusal.is_empty() {
            return Ok(Continued {
                granted: true,
                runs: false,
            });
        }
        let taken = store
            .take_budget_refusal(refusal)
            .await
            .map_err(ApiError::internal)?;
        let Some((kept, reply_to)) = taken else {
            return Ok(Continued {
                granted: true,
                runs: false,
            });
        };
        if let Err(e) = self.queue_kept(kept.clone(), reply_to, None, None).await {
            // Refused now (the provider changed and takes no such image): it stays kept.
            if let Err(e) = store.keep_budget_refusal(refusal, &kept, reply_to).await {
                tracing::error!(error = %e, "cannot keep a refused message again");
            }
            return Err(e);
        }
        tracing::info!(
            refusal,
            "the refused message runs after the owner's Continue"
        );
        Ok(Continued {
            granted: true,
            runs: true,
        })
    }

    /// Before a turn's next model step: the failure that stops it when a limit is reached (the
    /// step that crossed it has finished; no further model call).
    pub(super) async fn over_budget_mid_turn(&self) -> Option<(String, FailReason)> {
        let (standing, over) = self.inner.budget.over().await?;
        tracing::info!("budget limit reached mid-turn; the turn stops before its next step");
        Some(over_budget_failure(&standing, &over))
    }

    /// Tells the owner (through the outbox) of each budget warning now due, in topic `thread_id`
    /// (the turn's that crossed it; `None`: the main chat).
    pub(super) async fn warn_budget(&self, thread_id: Option<i64>) {
        let locale = self.inner.media.locale();
        for limit in self.inner.budget.warnings_due().await {
            let item = NewItem {
                turn_id: String::new(),
                body: ItemBody::Notice {
                    text: texts::warning(locale, &limit),
                },
                reply_to: None,
                placeholder: None,
                thread_id,
                outside: false,
            };
            if let Err(e) = self.inner.outbox.queue(item).await {
                tracing::warn!(error = %e, "cannot queue a budget warning");
            }
        }
    }
}
