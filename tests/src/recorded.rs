//! Recording what a fake HTTP server receives: `Recorded` (method, path, headers and body of
//! one request, as received) and `Recorder`, the shared in-order log a fake appends to and a
//! test reads or waits on. The fakes wrap `Recorded` in their own request types (which deref to
//! it) to add what they parse out of the body.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, Method, Uri};
use bytes::Bytes;
use tokio::sync::Notify;

/// One HTTP request as a fake received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body exactly as received.
    pub bytes: Bytes,
}

impl Recorded {
    /// The request made of these parts (header values decoded lossily).
    pub fn new(method: &Method, uri: &Uri, headers: &HeaderMap, bytes: Bytes) -> Recorded {
        Recorded {
            method: method.to_string(),
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
                    (n.as_str().to_owned(), v)
                })
                .collect(),
            bytes,
        }
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The log of what a fake received, in order; clones share it.
#[derive(Debug)]
pub struct Recorder<T> {
    inner: Arc<Log<T>>,
}

#[derive(Debug)]
struct Log<T> {
    items: Mutex<Vec<T>>,
    /// Woken whenever an item is recorded.
    arrived: Notify,
}

impl<T> Clone for Recorder<T> {
    fn clone(&self) -> Self {
        Recorder {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Default for Recorder<T> {
    fn default() -> Self {
        Recorder {
            inner: Arc::new(Log {
                items: Mutex::new(Vec::new()),
                arrived: Notify::new(),
            }),
        }
    }
}

impl<T: Clone> Recorder<T> {
    /// Appends `item`; returns its index.
    pub fn push(&self, item: T) -> usize {
        let index = {
            let mut items = self.inner.items.lock().unwrap();
            items.push(item);
            items.len() - 1
        };
        self.inner.arrived.notify_waiters();
        index
    }

    /// Everything recorded so far, in order.
    pub fn all(&self) -> Vec<T> {
        self.inner.items.lock().unwrap().clone()
    }

    /// The most recent item.
    pub fn last(&self) -> Option<T> {
        self.inner.items.lock().unwrap().last().cloned()
    }

    /// How many items were recorded.
    pub fn len(&self) -> usize {
        self.inner.items.lock().unwrap().len()
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until at least `n` items were recorded; `false` when `timeout` passed first.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.inner.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if self.len() >= n {
                return true;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return false;
            }
        }
    }
}
