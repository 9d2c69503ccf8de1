//! A turn within its context budget: the budget of the current model, shrinking the request
//! before a call (this turn's earlier tool outputs slimmed, then older rounds folded into the
//! session summary), the retries after a context-too-long answer, and the usage each call
//! reports (stored, and correcting the session's estimates).

use super::persist::store_failed;
use super::{Stop, Turn};
use crate::conversation::{Block, Message, Role, Usage};
use crate::request::context::starts_round;
use crate::request::fold::{KEEP_ROUNDS, slim_turn_outputs};
use crate::request::history::Limits;
use crate::request::tokens::messages_tokens;
use crate::turn::session_history;

impl Turn {
    /// The request budget of the current model, in this session's estimate units.
    pub(super) fn token_budget_for_model(&self) -> u64 {
        let turns = &self.turns;
        let window = turns.window(&self.model.name, &self.model.model);
        let budget = u64::from(window.input_budget());
        // The calibration says how much the provider counts over the estimate.
        let calibration = &turns.inner.calibration;
        let unit = calibration.correct(self.session_id, 1_000);
        let budget = budget.saturating_mul(1_000) / unit.max(1);
        calibration
            .ceiling(self.session_id)
            .map_or(budget, |c| budget.min(c))
    }

    /// The estimated tokens of the next request.
    pub(super) fn request_tokens(&self) -> u64 {
        self.prefix_estimate + messages_tokens(&self.messages)
    }

    /// Before a model call, over the budget: this turn's earlier tool outputs shrink to their
    /// stored (slimmed) form; still over, older rounds fold into the session summary.
    pub(super) async fn fit_token_budget(&mut self) -> Result<(), Stop> {
        self.token_budget = self.token_budget_for_model();
        let estimate = self.request_tokens();
        if estimate <= self.token_budget {
            return Ok(());
        }
        let saved = slim_turn_outputs(&mut self.messages, 0);
        let after = self.request_tokens();
        tracing::info!(
            estimate,
            budget = self.token_budget,
            saved,
            "over the context budget: earlier tool outputs slimmed"
        );
        if after <= self.token_budget || self.turn_start == 0 {
            return Ok(());
        }
        let turns = &self.turns.inner;
        let fixed = self.prefix_estimate + messages_tokens(&self.messages[self.turn_start..]);
        let limits = Limits {
            rounds: turns.context_rounds,
            token_budget: self.token_budget,
            fixed,
            kind: self.model.kind,
        };
        let history = session_history::load(&turns.store, self.session_id, limits)
            .await
            .map_err(store_failed)?;
        if history.folded.is_some() {
            turns.after_fold.folded(self.session_id);
        }
        self.replace_history(history.with_summary());
        tracing::info!(
            before = after,
            after = self.request_tokens(),
            budget = self.token_budget,
            "over the context budget: older rounds folded"
        );
        Ok(())
    }

    /// After a context-too-long answer: first fold every stored round but the last two into the
    /// summary; then keep only this turn (system prompt + the current message and its tool
    /// work, slimmed). `false` when both were tried.
    pub(super) async fn shrink(&mut self) -> Result<bool, Stop> {
        self.shrinks += 1;
        let turns = &self.turns.inner;
        turns
            .calibration
            .refused(self.session_id, self.request_tokens());
        let history = match self.shrinks {
            1 => {
                let compaction = session_history::compact(
                    &turns.store,
                    self.session_id,
                    turns.context_rounds,
                    self.model.kind,
                )
                .await
                .map_err(store_failed)?;
                if compaction.folded {
                    turns.after_fold.folded(self.session_id);
                }
                tracing::warn!(
                    before = compaction.before,
                    after = compaction.after,
                    "context too long: the session was compacted; retrying"
                );
                let limits = Limits {
                    rounds: KEEP_ROUNDS,
                    token_budget: u64::MAX,
                    fixed: 0,
                    kind: self.model.kind,
                };
                session_history::load(&turns.store, self.session_id, limits)
                    .await
                    .map_err(store_failed)?
                    .with_summary()
            }
            2 => {
                tracing::warn!("context still too long: retrying with the current message only");
                Vec::new()
            }
            _ => return Ok(false),
        };
        self.replace_history(history);
        slim_turn_outputs(&mut self.messages, 0);
        Ok(true)
    }

    /// Puts `history` (reloaded from the store, so ending with this turn's round) before this
    /// turn's messages.
    fn replace_history(&mut self, history: Vec<Message>) {
        let mut current = self
            .messages
            .split_off(self.turn_start.min(self.messages.len()));
        let mut history = without_current_round(history);
        if history.last().is_none_or(|m| m.role == Role::User)
            && let Some(first) = current.first_mut()
        {
            // Results whose calls are no longer in the history (folded) must go too, and a
            // history ending in a user message (the summary alone) joins the current one.
            first
                .content
                .retain(|b| !matches!(b, Block::ToolResult { .. }));
            if let Some(last) = history.pop_if(|m| m.role == Role::User) {
                first.content.splice(0..0, last.content);
            }
        }
        self.messages = history;
        self.turn_start = self.messages.len();
        self.stable_prefix = self.messages.len();
        self.messages.extend(current);
    }

    /// Corrects the session's estimate by a call's usage.
    pub(super) fn account(&self, usage: &Usage) {
        let reported = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
        self.turns
            .inner
            .calibration
            .observe(self.session_id, self.request_tokens(), reported);
    }

    /// The store write that records a call's usage; it borrows nothing, so the turn runs it
    /// beside its next write of the conversation (the ledger is not on the way to the answer).
    pub(super) fn record_usage(&self, usage: Usage) -> impl Future<Output = ()> + Send + 'static {
        let ledger = self.turns.inner.usage.clone();
        let (session_id, name, model, purpose) = (
            self.session_id,
            self.model.name.clone(),
            self.model.model.clone(),
            self.purpose,
        );
        async move {
            ledger
                .record(Some(session_id), (&name, &model), purpose, &usage)
                .await
        }
    }
}

/// `history` without its last round: the current one, stored before the history was reloaded
/// (a trailing tool-results message merged into it is in the turn's first message too).
fn without_current_round(mut history: Vec<Message>) -> Vec<Message> {
    if let Some(at) = history.iter().rposition(starts_round) {
        history.truncate(at);
    }
    history
}
