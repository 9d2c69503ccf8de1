//! `Hub`: the live side of the outbox — the running owner turn (its `started` event, current
//! step and placeholder) and one broadcast channel for new items and progress — and the task
//! behind each subscription (snapshot, replay from the store, then follow; resync on lag).
//!
//! Whatever changes the running turn and broadcasts does both under one std `Mutex` (never held
//! across an `.await`), so a subscriber's snapshot and its receiver always agree.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use super::{OwnerDelivery, StoredItem};
use crate::store::{Store, StoreError};

/// Events buffered per subscriber before it lags (and resyncs from the store).
const CAPACITY: usize = 1024;
/// Deliveries queued towards one client.
const CLIENT_QUEUE: usize = 64;

/// What a subscriber receives.
#[derive(Debug, Clone)]
pub enum Delivery<E> {
    /// An item to deliver (replayed or new).
    Item(Arc<StoredItem>),
    /// Progress of the running owner turn.
    Live(Live<E>),
}

/// A progress event of the running owner turn.
#[derive(Debug, Clone)]
pub struct Live<E> {
    pub turn_id: String,
    pub event: E,
    /// With the turn's first event: where its outcome goes.
    pub delivery: Option<OwnerDelivery>,
}

/// A subscription's deliveries; a store failure ends it with an error.
pub(crate) type Subscription<E> = ReceiverStream<Result<Delivery<E>, StoreError>>;

/// The running owner turn, as a re-attaching client needs it.
#[derive(Debug)]
struct Running<E> {
    turn_id: String,
    delivery: OwnerDelivery,
    started: E,
    /// The last remembered step (tool, CLI, speech).
    step: Option<E>,
}

#[derive(Debug)]
struct State<E> {
    turn: Option<Running<E>>,
}

/// The live state and the broadcast channel; clones share them.
#[derive(Debug)]
pub(super) struct Hub<E> {
    state: Arc<Mutex<State<E>>>,
    tx: broadcast::Sender<Delivery<E>>,
}

impl<E> Clone for Hub<E> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            tx: self.tx.clone(),
        }
    }
}

impl<E: Clone + Send + Sync + 'static> Hub<E> {
    pub(super) fn new() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self {
            state: Arc::new(Mutex::new(State { turn: None })),
            tx,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, delivery: Delivery<E>) {
        // No subscriber is fine: the item is in the store, progress is only for the living.
        let _ = self.tx.send(delivery);
    }

    pub(super) fn begin(&self, turn_id: &str, delivery: OwnerDelivery, started: E) {
        let mut state = self.lock();
        state.turn = Some(Running {
            turn_id: turn_id.to_owned(),
            delivery,
            started: started.clone(),
            step: None,
        });
        self.send(Delivery::Live(Live {
            turn_id: turn_id.to_owned(),
            event: started,
            delivery: Some(delivery),
        }));
    }

    pub(super) fn progress(&self, turn_id: &str, event: E, remember: bool) {
        let mut state = self.lock();
        let Some(running) = state.turn.as_mut().filter(|r| r.turn_id == turn_id) else {
            return;
        };
        if remember {
            running.step = Some(event.clone());
        }
        self.send(Delivery::Live(Live {
            turn_id: turn_id.to_owned(),
            event,
            delivery: None,
        }));
    }

    pub(super) fn placeholder(&self, turn_id: &str) -> Option<i64> {
        let state = self.lock();
        state
            .turn
            .as_ref()
            .filter(|r| r.turn_id == turn_id)
            .and_then(|r| r.delivery.placeholder)
    }

    pub(super) fn set_placeholder(&self, turn_id: &str, message_id: i64) {
        let mut state = self.lock();
        if let Some(running) = state.turn.as_mut().filter(|r| r.turn_id == turn_id) {
            running.delivery.placeholder = Some(message_id);
        }
    }

    /// Ends the running turn without an item: subscribers get `ended` as its last event.
    pub(super) fn abandon(&self, turn_id: &str, ended: E) {
        let mut state = self.lock();
        if state.turn.as_ref().is_some_and(|r| r.turn_id == turn_id) {
            state.turn = None;
            self.send(Delivery::Live(Live {
                turn_id: turn_id.to_owned(),
                event: ended,
                delivery: None,
            }));
        }
    }

    /// Broadcasts a stored item; it ends its turn's live progress.
    pub(super) fn deliver(&self, item: StoredItem) {
        let mut state = self.lock();
        if state
            .turn
            .as_ref()
            .is_some_and(|r| r.turn_id == item.turn_id)
        {
            state.turn = None;
        }
        self.send(Delivery::Item(Arc::new(item)));
    }

    /// A receiver and, consistent with it, the running turn's `started` event and step.
    fn attach(&self) -> (broadcast::Receiver<Delivery<E>>, Vec<Live<E>>) {
        let state = self.lock();
        let rx = self.tx.subscribe();
        let mut snapshot = Vec::new();
        if let Some(r) = &state.turn {
            snapshot.push(Live {
                turn_id: r.turn_id.clone(),
                event: r.started.clone(),
                delivery: Some(r.delivery),
            });
            if let Some(step) = &r.step {
                snapshot.push(Live {
                    turn_id: r.turn_id.clone(),
                    event: step.clone(),
                    delivery: None,
                });
            }
        }
        (rx, snapshot)
    }
}

/// Starts the task behind one subscription; it ends when the client goes away, at `cancel`, or
/// after a store failure (sent as the last element).
pub(super) fn subscribe<E: Clone + Send + Sync + 'static>(
    hub: Hub<E>,
    store: Store,
    after_seq: i64,
    cancel: CancellationToken,
) -> Subscription<E> {
    let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
    let watch = tx.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = cancel.cancelled() => {}
            () = watch.closed() => {}
            () = follow(hub, store, after_seq, tx) => {}
        }
    });
    ReceiverStream::new(rx)
}

type Client<E> = mpsc::Sender<Result<Delivery<E>, StoreError>>;

async fn follow<E: Clone + Send + Sync + 'static>(
    hub: Hub<E>,
    store: Store,
    mut last: i64,
    tx: Client<E>,
) {
    loop {
        let (mut rx, snapshot) = hub.attach();
        // The running turn first: if its item is among the pending ones, it comes after and
        // ends the turn for the client.
        for live in snapshot {
            if tx.send(Ok(Delivery::Live(live))).await.is_err() {
                return;
            }
        }
        let pending = match store.pending_outbox(last).await {
            Ok(pending) => pending,
            Err(e) => {
                tracing::error!(error = %e, "cannot replay the outbox");
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        for item in pending {
            last = item.seq;
            if tx.send(Ok(Delivery::Item(Arc::new(item)))).await.is_err() {
                return;
            }
        }
        loop {
            let delivery = match rx.recv().await {
                Ok(Delivery::Item(item)) if item.seq <= last => continue,
                Ok(delivery) => delivery,
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "a subscriber fell behind; replaying from the store");
                    break;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if let Delivery::Item(item) = &delivery {
                last = item.seq;
            }
            if tx.send(Ok(delivery)).await.is_err() {
                return;
            }
        }
    }
}
