//! The `[budget]` in the turn loop: a new owner turn over a limit is refused before any model
//! call (through the outbox with the spend so far, or as a typed `Refusal` for a client that
//! wants no delivery); a running turn finishes its current step and stops before the next
//! model call; after a turn's spend is recorded, the owner gets each warning now due.

use std::collections::BTreeMap;

use chrono::Utc;

use super::{ApiError, FailReason, OwnerDelivery, TurnEvent, TurnEvents, Turns, single};
use crate::budget::texts::{self};
use crate::budget::{Budget, LimitState, Standing};
use crate::outbox::{ItemBody, NewItem};
use crate::refusal::Refusal;

/// The failure of a turn stopped at the budget (its owner-visible reason and English message).
fn over_budget_failure(standing: &Standing, over: &LimitState) -> (String, FailReason) {
    let args: BTreeMap<String, String> = standing
        .refusal_args(over)
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
    /// outbox item for the owner (reason `BUDGET_EXCEEDED`, the spend and the override keys) and
    /// a single `BudgetExceeded` event; without, a `Refusal`. No model is called either way.
    pub(super) async fn refuse_over_budget(
        &self,
        delivery: Option<OwnerDelivery>,
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
        let (message, reason) = over_budget_failure(&standing, &over);
        let Some(delivery) = delivery else {
            return Err(Refusal::BudgetExceeded {
                args: standing.refusal_args(&over),
                message,
            }
            .into());
        };
        let item = NewItem {
            turn_id: format!("budget-{}", Utc::now().timestamp_micros()),
            body: ItemBody::Failed { message, reason },
            reply_to: delivery.reply_to,
            placeholder: delivery.placeholder,
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

    /// Before a turn's next model step: the failure that stops it when a limit is reached (the
    /// step that crossed it has finished; no further model call).
    pub(super) async fn over_budget_mid_turn(&self) -> Option<(String, FailReason)> {
        let (standing, over) = self.inner.budget.over().await?;
        tracing::info!("budget limit reached mid-turn; the turn stops before its next step");
        Some(over_budget_failure(&standing, &over))
    }

    /// Tells the owner (through the outbox) of each budget warning now due.
    pub(super) async fn warn_budget(&self) {
        let locale = self.inner.media.locale();
        for limit in self.inner.budget.warnings_due().await {
            let item = NewItem {
                turn_id: String::new(),
                body: ItemBody::Notice {
                    text: texts::warning(locale, &limit),
                },
                reply_to: None,
                placeholder: None,
            };
            if let Err(e) = self.inner.outbox.queue(item).await {
                tracing::warn!(error = %e, "cannot queue a budget warning");
            }
        }
    }
}
