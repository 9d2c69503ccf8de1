//! A turn's history under the budget: the session summary and the stored rounds after it, the
//! oldest rounds folded into the summary (and the summary saved) when they exceed the rounds
//! ceiling or the token budget; `/compact`; the summary placed as the history's first block.

use kernel_common::config::ProviderKind;

use super::budget::{KEEP_ROUNDS, fold_count};
use super::context::window_rounds;
use super::repair::repair;
use super::session_summary::SessionSummary;
use super::tokens::{messages_tokens, text_tokens};
use crate::conversation::{Block, Message, Role};
use crate::store::{Store, StoreError, StoredMessage, StoredSummary};

/// A session's history, ready for the request.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    pub summary: SessionSummary,
    /// Repaired and windowed, without the summary.
    pub messages: Vec<Message>,
    /// Whether rounds were folded into the summary (and it was saved) by this load.
    pub folded: bool,
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

/// How a history is loaded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The rounds ceiling (`general.context_rounds`).
    pub rounds: usize,
    /// Tokens the history may use with `fixed` (prefix, current message) in the request.
    pub budget: u64,
    pub fixed: u64,
    pub kind: ProviderKind,
}

impl Limits {
    /// Limits under which nothing folds (to look, not to change).
    pub(crate) fn peek(kind: ProviderKind) -> Self {
        Self {
            rounds: usize::MAX,
            budget: u64::MAX,
            fixed: 0,
            kind,
        }
    }
}

/// Loads `session_id`'s history, folding what does not fit into the summary (saved at once).
pub(crate) async fn load(
    store: &Store,
    session_id: i64,
    limits: Limits,
) -> Result<History, StoreError> {
    let (mut summary, through) = load_summary(store, session_id).await?;
    // Everything after the summary: normally about `rounds` rounds, since what exceeds the
    // ceiling is folded (a session from before summaries folds its whole past once).
    let stored = from_round_start(store.load_after(session_id, through).await?);
    let ordinals: Vec<i64> = stored.iter().map(|s| s.ordinal).collect();
    let mut plain: Vec<Message> = stored.into_iter().map(|s| s.message).collect();
    let summary_tokens = text_tokens(&summary.render());
    let n = fold_count(
        &plain,
        limits.fixed + summary_tokens,
        limits.budget,
        limits.rounds,
    );
    if n > 0 {
        let before = summary.rounds;
        summary.fold(&plain[..n]);
        let folded_rounds = summary.rounds - before;
        save(store, session_id, &summary, ordinals[n - 1]).await?;
        tracing::info!(
            session = session_id,
            folded_rounds,
            summary_rounds = summary.rounds,
            "older rounds folded into the session summary"
        );
    }
    let rest = plain.split_off(n);
    Ok(History {
        summary,
        messages: window_rounds(repair(rest, limits.kind), limits.rounds),
        folded: n > 0,
    })
}

/// What [`compact`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compaction {
    /// Estimated history tokens before and after.
    pub before: u64,
    pub after: u64,
    /// Whether any round was folded into the summary.
    pub folded: bool,
}

/// Folds every round of `session_id` but the last [`KEEP_ROUNDS`] into its summary.
pub(crate) async fn compact(
    store: &Store,
    session_id: i64,
    rounds: usize,
    kind: ProviderKind,
) -> Result<Compaction, StoreError> {
    let before = load(
        store,
        session_id,
        Limits {
            rounds,
            budget: u64::MAX,
            fixed: 0,
            kind,
        },
    )
    .await?;
    let after = load(
        store,
        session_id,
        Limits {
            rounds: KEEP_ROUNDS,
            budget: u64::MAX,
            fixed: 0,
            kind,
        },
    )
    .await?;
    Ok(Compaction {
        before: before.tokens(),
        after: after.tokens(),
        folded: before.folded || after.folded,
    })
}

async fn load_summary(store: &Store, session_id: i64) -> Result<(SessionSummary, i64), StoreError> {
    Ok(match store.load_summary(session_id).await? {
        Some(s) => (SessionSummary::from_json(&s.summary), s.through_ordinal),
        None => (SessionSummary::default(), -1),
    })
}

async fn save(
    store: &Store,
    session_id: i64,
    summary: &SessionSummary,
    through_ordinal: i64,
) -> Result<(), StoreError> {
    store
        .save_summary(
            session_id,
            &StoredSummary {
                summary: summary.to_json(),
                through_ordinal,
            },
        )
        .await
}

/// `stored` from its first round start (a fold may have ended inside a round only if the store
/// was edited; what precedes a round start is left out).
fn from_round_start(mut stored: Vec<StoredMessage>) -> Vec<StoredMessage> {
    let start = stored
        .iter()
        .position(|m| super::context::starts_round(&m.message))
        .unwrap_or(stored.len());
    stored.drain(..start);
    stored
}
