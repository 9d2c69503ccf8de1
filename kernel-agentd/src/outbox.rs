//! `Outbox`: everything meant for the owner — a turn's final answer, a failure or cancellation
//! notice — stored durably with a monotonic `seq` before anyone is told, replayed to every
//! subscriber until acknowledged, then pruned after [`KEEP_ACKED`].
//!
//! The live progress of the running owner turn goes through the same subscription
//! (`outbox::hub`), so a client that connects mid-turn re-attaches to it. The service is generic
//! over the live event type (the turn loop's `TurnEvent`) so that it sits below the turn loop.

mod hub;

use std::sync::Arc;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::conversation::Message;
use crate::store::{Store, StoreError};

/// The longest topic name Telegram takes (`editForumTopic`): a longer title is cut there.
const MAX_TOPIC_NAME_CHARS: usize = 128;

pub(crate) use crate::store::outbox::{Ack, Backlog, ItemBody, NewItem, StoredItem};
pub(crate) use hub::{Delivery, Subscription};

/// How long acknowledged items are kept before they are pruned.
pub(crate) const KEEP_ACKED: chrono::TimeDelta = chrono::TimeDelta::days(7);

/// Where a turn's outcome goes in the owner's chat (the client's message ids, opaque here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnerDelivery {
    /// The owner's message the answer replies to.
    pub reply_to: Option<i64>,
    /// The client's placeholder showing the turn, if it sent one already.
    pub placeholder: Option<i64>,
    /// The client's topic (Telegram `message_thread_id`) the owner message came from; `None`:
    /// the main chat. Opaque to agentd; its outcome goes back there.
    pub thread_id: Option<i64>,
}

/// The owner's delivery queue and live feed; a cheap `Clone` handle.
#[derive(Debug)]
pub struct Outbox<E> {
    inner: Arc<Inner<E>>,
}

impl<E> Clone for Outbox<E> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

#[derive(Debug)]
struct Inner<E> {
    store: Store,
    hub: hub::Hub<E>,
    /// Cancelled at shutdown: every subscription ends.
    cancel: CancellationToken,
}

impl<E: Clone + Send + Sync + 'static> Outbox<E> {
    /// An outbox over `store`; subscriptions end when `cancel` is cancelled.
    pub fn new(store: Store, cancel: CancellationToken) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                hub: hub::Hub::new(),
                cancel,
            }),
        }
    }

    /// Announces the owner turn `turn_id` to subscribers (`started` is its first event).
    pub fn begin_turn(&self, turn_id: &str, delivery: OwnerDelivery, started: E) {
        self.inner.hub.begin(turn_id, delivery, started);
    }

    /// A progress event of turn `turn_id`; `remember` keeps it for clients that re-attach
    /// (the step the turn is at: a tool, a CLI, speech), text deltas are not kept.
    pub fn progress(&self, turn_id: &str, event: E, remember: bool) {
        self.inner.hub.progress(turn_id, event, remember);
    }

    /// Stores `messages` (the turn's final answer, possibly none) and `item` in one transaction,
    /// then tells subscribers and ends the live turn. On a store failure the live turn ends with
    /// `ended` instead (nothing could be queued) and the error is returned.
    pub async fn commit(
        &self,
        session_id: i64,
        messages: &[Message],
        mut item: NewItem,
        ended: impl FnOnce() -> E,
    ) -> Result<i64, StoreError> {
        let hub = &self.inner.hub;
        item.placeholder = item.placeholder.or(hub.placeholder(&item.turn_id));
        let stored = self
            .inner
            .store
            .append_with_outbox(session_id, messages, &item)
            .await;
        let seq = match stored {
            Ok(seq) => seq,
            Err(e) => {
                hub.abandon(&item.turn_id, ended());
                return Err(e);
            }
        };
        // A placeholder reported while the row was being written is recorded on it now.
        let late = hub
            .placeholder(&item.turn_id)
            .filter(|p| Some(*p) != item.placeholder);
        if let Some(placeholder) = late {
            item.placeholder = Some(placeholder);
            if let Err(e) = self
                .inner
                .store
                .set_outbox_placeholder(&item.turn_id, placeholder)
                .await
            {
                tracing::warn!(error = %e, "cannot record a late placeholder");
            }
        }
        tracing::info!(seq, turn = %item.turn_id, "outbox item stored");
        hub.deliver(StoredItem {
            seq,
            turn_id: item.turn_id,
            body: item.body,
            reply_to: item.reply_to,
            placeholder: item.placeholder,
            thread_id: item.thread_id,
            parts_done: 0,
            parts_failed: 0,
            created_at: Utc::now(),
        });
        Ok(seq)
    }

    /// The placeholder a client reported for the live turn `turn_id`, if any.
    pub fn placeholder(&self, turn_id: &str) -> Option<i64> {
        self.inner.hub.placeholder(turn_id)
    }

    /// Ends the live turn `turn_id` with `ended` and no item (a turn that has no outcome).
    pub fn abandon_turn(&self, turn_id: &str, ended: E) {
        self.inner.hub.abandon(turn_id, ended);
    }

    /// Stores `item` on its own (a file the model sends) and tells subscribers.
    pub async fn queue(&self, item: NewItem) -> Result<i64, StoreError> {
        let seq = self.inner.store.store_outbox_item(&item).await?;
        self.stored(seq, item);
        Ok(seq)
    }

    /// The Telegram topic session `session_id` lives in (where its items go), if any.
    pub async fn session_topic(&self, session_id: i64) -> Result<Option<i64>, StoreError> {
        self.inner.store.session_topic(session_id).await
    }

    /// Session `session_id` got `title`: when it lives in a Telegram topic, an item asks the
    /// adapter to rename the topic, and the title is recorded as the topic's name (an item for
    /// the topic after the owner deleted it names it). Failures are logged (a title is never
    /// worth failing for).
    pub async fn title_topic(&self, session_id: i64, title: &str) {
        let thread_id = match self.session_topic(session_id).await {
            Ok(Some(thread)) => thread,
            Ok(None) => return,
            Err(e) => {
                return tracing::warn!(session = session_id, error = %e, "cannot read the session's topic; the topic keeps its name");
            }
        };
        let name: String = title.trim().chars().take(MAX_TOPIC_NAME_CHARS).collect();
        if !name.is_empty()
            && let Err(e) = self.inner.store.name_topic(thread_id, &name).await
        {
            tracing::warn!(session = session_id, error = %e, "cannot record the topic's new name");
        }
        let item = NewItem {
            turn_id: format!("title-{session_id}-{}", Utc::now().timestamp_micros()),
            body: ItemBody::TopicTitle {
                name: title.to_owned(),
            },
            reply_to: None,
            placeholder: None,
            thread_id: Some(thread_id),
            outside: false,
        };
        match self.queue(item).await {
            Ok(seq) => tracing::info!(seq, session = session_id, thread_id, "topic rename queued"),
            Err(e) => {
                tracing::warn!(session = session_id, error = %e, "cannot queue the topic's rename")
            }
        }
    }

    /// The name of Telegram topic `thread_id`, if known.
    pub async fn topic_name(&self, thread_id: i64) -> Result<Option<String>, StoreError> {
        self.inner.store.topic_name(thread_id).await
    }

    /// Tells subscribers about `item`, stored as `seq` in another service's transaction (a
    /// reminder queued with its schedule's update).
    pub fn stored(&self, seq: i64, item: NewItem) {
        tracing::info!(seq, turn = %item.turn_id, "outbox item stored");
        self.inner.hub.deliver(StoredItem {
            seq,
            turn_id: item.turn_id,
            body: item.body,
            reply_to: item.reply_to,
            placeholder: item.placeholder,
            thread_id: item.thread_id,
            parts_done: 0,
            parts_failed: 0,
            created_at: Utc::now(),
        });
    }

    /// Records the placeholder showing turn `turn_id` (live and on its stored items).
    pub async fn set_placeholder(&self, turn_id: &str, message_id: i64) -> Result<(), StoreError> {
        self.inner.hub.set_placeholder(turn_id, message_id);
        self.inner
            .store
            .set_outbox_placeholder(turn_id, message_id)
            .await
    }

    /// Records a delivery report (idempotent); a finished item is no longer replayed, and items
    /// acknowledged more than [`KEEP_ACKED`] ago are pruned.
    pub async fn ack(&self, ack: &Ack) -> Result<(), StoreError> {
        let store = &self.inner.store;
        let found = store.ack_outbox(ack).await?;
        if !found {
            tracing::debug!(seq = ack.seq, "ack for an unknown (pruned?) outbox item");
            return Ok(());
        }
        if ack.failed {
            tracing::warn!(
                seq = ack.seq,
                part = ack.parts_done,
                "a part of an outbox item was refused for good"
            );
        }
        if ack.done {
            tracing::info!(seq = ack.seq, "outbox item delivered");
            let pruned = store.prune_outbox(Utc::now() - KEEP_ACKED).await?;
            if pruned > 0 {
                tracing::debug!(pruned, "old delivered outbox items pruned");
            }
        }
        Ok(())
    }

    /// How many items wait for delivery and since when the oldest waits.
    pub async fn backlog(&self) -> Result<Backlog, StoreError> {
        self.inner.store.outbox_backlog().await
    }

    /// Follows the outbox from `after_seq`: the running owner turn's `started` event (and its
    /// current step) if one runs, every unacknowledged item with a greater `seq` in order, then
    /// new items and live progress as they happen. Ends at shutdown or on a store failure.
    pub fn subscribe(&self, after_seq: i64) -> Subscription<E> {
        hub::subscribe(
            self.inner.hub.clone(),
            self.inner.store.clone(),
            after_seq,
            self.inner.cancel.clone(),
        )
    }
}

#[cfg(test)]
mod tests;
