//! A request's history under the budget, from plain data: the session summary and the stored
//! rounds after it ([`StoredHistory`]), the oldest rounds folded into the summary when they
//! exceed the rounds ceiling or the token budget ([`fit`]), the rest repaired and windowed; the
//! summary placed as the history's first block. Reading and saving the summary is the caller's
//! (`turn::session_history`).

use kernel_common::config::ProviderKind;

use super::context::{starts_round, window_rounds};
use super::fold::fold_count;
use super::repair::repair;
use super::session_summary::SessionSummary;
use super::tokens::{messages_tokens, text_tokens};
use crate::conversation::{Block, Message, Role};

/// A session's history as stored: its summary and the messages after the ones it covers.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredHistory {
    pub summary: SessionSummary,
    /// The stored messages after those the summary covers, oldest first, with their ordinals.
    pub messages: Vec<(i64, Message)>,
}

/// Rounds [`fit`] folded into the summary: the summary must be saved as covering
/// `through_ordinal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Folded {
    pub through_ordinal: i64,
    /// Rounds folded by this fit.
    pub rounds: u64,
}

/// A session's history, ready for the request.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    pub summary: SessionSummary,
    /// Repaired and windowed, without the summary.
    pub messages: Vec<Message>,
    /// Set when rounds were folded into `summary` (which is then to be saved).
    pub folded: Option<Folded>,
}

impl History {
    /// The messages with the summary as the first block of the first (user) message; a user
    /// message of its own when the history is empty (it is merged into the new message).
    pub(crate) fn with_summary(self) -> Vec<Message> {
        let mut messages = self.messages;
        if self.summary.is_empty() {
            return messages;
        }
        let block = Block::text(self.summary.render());
        match messages.first_mut() {
            Some(first) if first.role == Role::User => first.content.insert(0, block),
            _ => messages.insert(
                0,
                Message {
                    role: Role::User,
                    content: vec![block],
                },
            ),
        }
        messages
    }

    /// Estimated tokens of the summary and the messages.
    pub(crate) fn tokens(&self) -> u64 {
        let summary = if self.summary.is_empty() {
            0
        } else {
            text_tokens(&self.summary.render())
        };
        summary + messages_tokens(&self.messages)
    }
}

/// How a history is fitted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The rounds ceiling (`general.context_rounds`).
    pub rounds: usize,
    /// Tokens the history may use with `fixed` (prefix, current message) in the request.
    pub token_budget: u64,
    pub fixed: u64,
    pub kind: ProviderKind,
}

impl Limits {
    /// Limits under which nothing folds (to look, not to change).
    pub(crate) fn peek(kind: ProviderKind) -> Self {
        Self {
            rounds: usize::MAX,
            token_budget: u64::MAX,
            fixed: 0,
            kind,
        }
    }
}

/// `stored` within `limits`: what does not fit folded into the summary (whole rounds, the
/// oldest first), the rest repaired for `limits.kind` and windowed to the rounds ceiling.
pub(crate) fn fit(stored: StoredHistory, limits: Limits) -> History {
    let StoredHistory {
        mut summary,
        messages,
    } = stored;
    // Everything after the summary: normally about `rounds` rounds, since what exceeds the
    // ceiling is folded (a session from before summaries folds its whole past once).
    let messages = from_round_start(messages);
    let (ordinals, mut plain): (Vec<i64>, Vec<Message>) = messages.into_iter().unzip();
    let summary_tokens = text_tokens(&summary.render());
    let n = fold_count(
        &plain,
        limits.fixed + summary_tokens,
        limits.token_budget,
        limits.rounds,
    );
    let folded = (n > 0).then(|| {
        let before = summary.rounds;
        summary.fold(&plain[..n]);
        Folded {
            through_ordinal: ordinals[n - 1],
            rounds: summary.rounds - before,
        }
    });
    let rest = plain.split_off(n);
    History {
        summary,
        messages: window_rounds(repair(rest, limits.kind), limits.rounds),
        folded,
    }
}

/// `stored` from its first round start (a fold may have ended inside a round only if the store
/// was edited; what precedes a round start is left out).
fn from_round_start(mut stored: Vec<(i64, Message)>) -> Vec<(i64, Message)> {
    let start = stored
        .iter()
        .position(|(_, m)| starts_round(m))
        .unwrap_or(stored.len());
    stored.drain(..start);
    stored
}
