//! Held calls: the next call of a method whose parameters match waits — after it arrived, before
//! it is performed — until the test releases it, so a test can act (kill a process) while the
//! bot waits for Telegram's answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use super::model::Predicate;

/// A one-way signal that can be awaited before or after it is set.
#[derive(Default)]
struct Flag {
    set: AtomicBool,
    notify: Notify,
}

impl Flag {
    fn set(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.set.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// The test's handle on a held call.
#[derive(Clone)]
pub struct Held {
    arrived: Arc<Flag>,
    release: Arc<Flag>,
}

impl Held {
    /// Waits until the call arrived (and is being held); panics after `timeout`.
    pub async fn arrived(&self, timeout: Duration) {
        tokio::time::timeout(timeout, self.arrived.wait())
            .await
            .expect("the held call never arrived");
    }

    /// Lets the call be performed and answered.
    pub fn release(&self) {
        self.release.set();
    }
}

/// A pending hold.
pub(crate) struct Hold {
    pub method: String,
    pub when: Predicate,
    held: Held,
}

impl Hold {
    pub(crate) fn new(method: &str, when: Predicate) -> (Hold, Held) {
        let held = Held {
            arrived: Arc::default(),
            release: Arc::default(),
        };
        let hold = Hold {
            method: method.to_ascii_lowercase(),
            when,
            held: held.clone(),
        };
        (hold, held)
    }
}

/// Takes the first hold matching this call, if any.
pub(crate) fn take_hold(holds: &mut Vec<Hold>, method: &str, params: &Value) -> Option<Held> {
    let index = holds
        .iter()
        .position(|h| h.method == method && (h.when)(params))?;
    Some(holds.remove(index).held)
}

/// Holds a taken call until it is released.
pub(crate) async fn wait(held: &Held) {
    held.arrived.set();
    held.release.wait().await;
}
