//! The conversation indexer: a background task that indexes every stored message after the
//! cursor (the migration of an existing database at start, then each new message as the store
//! signals its commit), in batches segmented off the async runtime.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::History;
use super::text::searchable;
use crate::memory::segment;
use crate::store::history_index::{HistoryEntry, RawHistoryMessage};
use crate::store::{Store, StoreError};

/// Messages read per batch.
const BATCH: usize = 256;
/// The pause after a failure before the indexer tries again.
const RETRY: Duration = Duration::from_secs(5);

/// Indexes until `cancel`: everything after the cursor, then whatever is stored later; wakes the
/// embedder (with `[embeddings]`) after each batch.
pub(super) async fn run(history: History, cancel: CancellationToken) {
    let (store, fts) = (history.inner.store.clone(), history.inner.fts);
    let started = std::time::Instant::now();
    let mut migrated = 0usize;
    let mut caught_up = false;
    loop {
        match index_batch(&store, fts).await {
            Ok(0) => {
                if !caught_up {
                    caught_up = true;
                    tracing::info!(
                        messages = migrated,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "the conversation index is up to date"
                    );
                }
                tokio::select! {
                    () = store.wait_for_messages() => {}
                    () = cancel.cancelled() => return,
                }
            }
            Ok(n) => {
                history.wake_embedder();
                if !caught_up {
                    migrated += n;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "indexing the conversation failed; retrying");
                tokio::select! {
                    () = tokio::time::sleep(RETRY) => {}
                    () = cancel.cancelled() => return,
                }
            }
        }
    }
}

/// Indexes the next batch after the cursor; how many messages it looked at.
pub(super) async fn index_batch(store: &Store, fts: bool) -> Result<usize, StoreError> {
    let cursor = store.history_cursor().await?;
    let batch = store.history_messages_after(cursor, BATCH).await?;
    let Some(last) = batch.last().map(|m| m.id) else {
        return Ok(0);
    };
    let n = batch.len();
    segment::ready().await;
    let entries = tokio::task::spawn_blocking(move || entries(batch, fts))
        .await
        .map_err(|e| StoreError::Corrupt(format!("segmenting messages failed: {e}")))?;
    store.index_history(&entries, last, fts).await?;
    tracing::debug!(looked_at = n, indexed = entries.len(), "messages indexed");
    Ok(n)
}

/// The index entries of `batch` (messages without searchable text have none).
pub(super) fn entries(batch: Vec<RawHistoryMessage>, fts: bool) -> Vec<HistoryEntry> {
    batch
        .into_iter()
        .filter_map(|m| {
            let text = searchable(&m.content)?;
            let terms = if fts {
                segment::index_terms(&text)
            } else {
                String::new()
            };
            Some(HistoryEntry {
                message_id: m.id,
                session_id: m.session_id,
                role: m.role,
                created_at: m.created_at,
                text,
                terms,
            })
        })
        .collect()
}
