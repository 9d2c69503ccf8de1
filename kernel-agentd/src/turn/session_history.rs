//! A session's history in the store, for request building: [`read`] gathers the summary and the
//! messages after it as plain data (`request::history::StoredHistory`), [`save_fold`] stores a
//! summary rounds were folded into; [`load`] does both around `request::history::fit` (the
//! mid-turn refits, `/compact`, `/status`), [`compact`] folds all but the last rounds.

use kernel_common::config::ProviderKind;

use crate::request::fold::KEEP_ROUNDS;
use crate::request::history::{self, Folded, History, Limits, StoredHistory};
use crate::request::session_summary::SessionSummary;
use crate::store::{Store, StoreError, StoredSummary};

/// The summary of `session_id` and its messages after the ones the summary covers.
pub(super) async fn read(store: &Store, session_id: i64) -> Result<StoredHistory, StoreError> {
    let (summary, through_ordinal) = match store.load_summary(session_id).await? {
        Some(s) => (SessionSummary::from_json(&s.summary), s.through_ordinal),
        None => (SessionSummary::default(), -1),
    };
    let messages = store
        .load_after(session_id, through_ordinal)
        .await?
        .into_iter()
        .map(|s| (s.ordinal, s.message))
        .collect();
    Ok(StoredHistory { summary, messages })
}

/// Saves `summary`, which `folded` says rounds were folded into.
pub(super) async fn save_fold(
    store: &Store,
    session_id: i64,
    summary: &SessionSummary,
    folded: Folded,
) -> Result<(), StoreError> {
    store
        .save_summary(
            session_id,
            &StoredSummary {
                summary: summary.to_json(),
                through_ordinal: folded.through_ordinal,
            },
        )
        .await?;
    tracing::info!(
        session = session_id,
        folded_rounds = folded.rounds,
        summary_rounds = summary.rounds,
        "older rounds folded into the session summary"
    );
    Ok(())
}

/// Loads `session_id`'s history within `limits`, what does not fit folded into the summary
/// (saved at once).
pub(super) async fn load(
    store: &Store,
    session_id: i64,
    limits: Limits,
) -> Result<History, StoreError> {
    let history = history::fit(read(store, session_id).await?, limits);
    if let Some(folded) = history.folded {
        save_fold(store, session_id, &history.summary, folded).await?;
    }
    Ok(history)
}

/// What [`compact`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Compaction {
    /// Estimated history tokens before and after.
    pub before: u64,
    pub after: u64,
    /// Whether any round was folded into the summary.
    pub folded: bool,
}

/// Folds every round of `session_id` but the last [`KEEP_ROUNDS`] into its summary.
pub(super) async fn compact(
    store: &Store,
    session_id: i64,
    rounds: usize,
    kind: ProviderKind,
) -> Result<Compaction, StoreError> {
    let unbounded = |rounds| Limits {
        rounds,
        token_budget: u64::MAX,
        fixed: 0,
        kind,
    };
    let before = load(store, session_id, unbounded(rounds)).await?;
    let after = load(store, session_id, unbounded(KEEP_ROUNDS)).await?;
    Ok(Compaction {
        before: before.tokens(),
        after: after.tokens(),
        folded: before.folded.is_some() || after.folded.is_some(),
    })
}
