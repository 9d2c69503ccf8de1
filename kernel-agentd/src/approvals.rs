//! `Approvals`: the owner's tap before a risky action runs (`[approvals]`). Any caller — a turn's
//! tool call, a scheduled task's turn, a delegation's bridge — awaits [`Approvals::request`]; the
//! request reaches every `Subscribe` client at once (and a client that subscribes later while it
//! is pending) and the requesting turn's `Chat` stream; [`Approvals::decide`] (the `Approve` RPC,
//! a Telegram button) answers it. Ids are random and single-use: a forged, replayed or expired id
//! changes nothing. "Allow for this session" lets the same action run again in that session
//! without asking.

mod texts;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use kernel_common::config::{ApprovalMode, ApprovalsConfig};
use kernel_proto::words::ApprovalOutcome;
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::tools::{Risk, ToolEvent, ToolEvents};

pub(crate) use crate::tools::ApprovalShown as Requested;

pub(crate) use texts::{DENIED, NOT_ANSWERED};

/// The longest text shown in an approval; a longer one is cut (its full length is stated).
pub(crate) const MAX_TEXT_CHARS: usize = 1500;
/// Events buffered per watcher.
const CAPACITY: usize = 64;

/// What a caller asks the owner to approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The turn (or delegation) asking; empty when none. Shown to clients, never trusted.
    pub turn_id: String,
    /// The session whose "allow for this session" choices apply.
    pub session_id: i64,
    /// What will run.
    pub risk: Risk,
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The owner allowed it (once, or for the session; or the session already allowed it).
    Allowed,
    /// The owner denied it.
    Denied,
    /// Nobody answered within `approvals.timeout_secs`: denied.
    Expired,
    /// The caller's turn was cancelled meanwhile: nothing runs.
    Cancelled,
}

impl Decision {
    /// Whether the action may run.
    pub fn allowed(self) -> bool {
        self == Self::Allowed
    }

    /// The word clients see in `ApprovalClosed`.
    pub fn word(self) -> ApprovalOutcome {
        match self {
            Self::Allowed => ApprovalOutcome::Allowed,
            Self::Denied => ApprovalOutcome::Denied,
            Self::Expired => ApprovalOutcome::Expired,
            Self::Cancelled => ApprovalOutcome::Cancelled,
        }
    }

    /// The word's wire value (`allowed`, `denied`, `expired`, `cancelled`), also in logs.
    pub fn as_str(self) -> &'static str {
        self.word().as_str()
    }
}

/// The owner's answer to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    /// Allow, and allow the same action without asking for the rest of the session.
    AllowForSession,
    Deny,
}

/// What watchers see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalEvent {
    Requested(Requested),
    /// The request is answered, expired or cancelled: its buttons go.
    Closed {
        id: String,
        decision: Decision,
    },
}

/// Why `decide` changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    #[error("no pending approval has this id (answered, expired, cancelled or never asked)")]
    NotPending,
}

/// The policy, the pending requests and the session allowances; a cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Approvals {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: ApprovalsConfig,
    state: Mutex<State>,
    tx: broadcast::Sender<ApprovalEvent>,
}

#[derive(Debug, Default)]
struct State {
    pending: HashMap<String, Pending>,
    /// (session, action) pairs the owner allowed for the session.
    allowed: HashSet<(i64, String)>,
}

#[derive(Debug)]
struct Pending {
    shown: Requested,
    session_id: i64,
    answer: oneshot::Sender<Choice>,
}

impl Default for Approvals {
    fn default() -> Self {
        Self::new(&ApprovalsConfig::default())
    }
}

impl Approvals {
    /// The service for `[approvals]`.
    pub fn new(config: &ApprovalsConfig) -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self {
            inner: Arc::new(Inner {
                config: config.clone(),
                state: Mutex::default(),
                tx,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `approvals.mode`.
    pub fn mode(&self) -> ApprovalMode {
        self.inner.config.mode
    }

    /// Whether a risky action must ask, given whether outside content entered its turn.
    pub fn must_ask(&self, outside_content: bool) -> bool {
        match self.mode() {
            ApprovalMode::Always => true,
            ApprovalMode::Untrusted => outside_content,
            ApprovalMode::Off => false,
        }
    }

    /// Asks the owner to approve `req` and waits for the answer, `approvals.timeout_secs`
    /// (then [`Decision::Expired`]) or `cancel` (then [`Decision::Cancelled`]). Returns at once
    /// with `Allowed` when the owner allowed this action for the session. `events` also carries
    /// the request and its closing (the asking turn's `Chat` stream).
    pub async fn request(
        &self,
        req: ApprovalRequest,
        events: &ToolEvents,
        cancel: &CancellationToken,
    ) -> Decision {
        let key = (req.session_id, req.risk.action.clone());
        if self.lock().allowed.contains(&key) {
            tracing::info!(action = %req.risk.action, "allowed for this session already");
            return Decision::Allowed;
        }
        let timeout = self.inner.config.timeout;
        let shown = requested(new_id(), &req, timeout);
        let id = shown.id.clone();
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.lock();
            state.pending.insert(
                id.clone(),
                Pending {
                    shown: shown.clone(),
                    session_id: req.session_id,
                    answer: tx,
                },
            );
            let _ = self.inner.tx.send(ApprovalEvent::Requested(shown.clone()));
        }
        tracing::info!(approval = %id, action = %shown.action, turn = %shown.turn_id, "asking the owner to approve");
        events.emit(ToolEvent::ApprovalRequested(shown));
        let choice = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Decision::Cancelled),
            answer = rx => answer.map_err(|_| Decision::Cancelled),
            () = tokio::time::sleep(timeout) => Err(Decision::Expired),
        };
        let decision = {
            let mut state = self.lock();
            let pending = state.pending.remove(&id);
            let decision = match choice {
                Ok(Choice::AllowOnce) => Decision::Allowed,
                Ok(Choice::AllowForSession) => {
                    if let Some(p) = &pending {
                        state.allowed.insert((p.session_id, p.shown.action.clone()));
                    } else {
                        state.allowed.insert(key);
                    }
                    Decision::Allowed
                }
                Ok(Choice::Deny) => Decision::Denied,
                Err(decision) => decision,
            };
            // A cancellation wins over an answer that raced with it: nothing runs.
            let decision = if cancel.is_cancelled() {
                Decision::Cancelled
            } else {
                decision
            };
            let _ = self.inner.tx.send(ApprovalEvent::Closed {
                id: id.clone(),
                decision,
            });
            decision
        };
        tracing::info!(approval = %id, decision = decision.as_str(), "approval closed");
        events.emit(ToolEvent::ApprovalClosed {
            id,
            decision: decision.as_str().to_owned(),
        });
        decision
    }

    /// Answers pending request `id`; refused (changing nothing) when no request with this id
    /// is pending.
    pub fn decide(&self, id: &str, choice: Choice) -> Result<(), ApprovalError> {
        let mut state = self.lock();
        let pending = state.pending.remove(id).ok_or_else(|| {
            tracing::info!("an approval answer for no pending request was refused");
            ApprovalError::NotPending
        })?;
        drop(state);
        if let Err(choice) = pending.answer.send(choice) {
            // The request ended this instant (cancelled or expired); it closes itself.
            tracing::info!(?choice, "an approval answer came as its request ended");
            return Err(ApprovalError::NotPending);
        }
        tracing::info!(approval = %id, ?choice, "approval answered");
        Ok(())
    }

    /// The pending requests and, consistent with them, a receiver of what happens next.
    pub fn watch(&self) -> (Vec<Requested>, broadcast::Receiver<ApprovalEvent>) {
        let state = self.lock();
        let rx = self.inner.tx.subscribe();
        let mut pending: Vec<Requested> = state.pending.values().map(|p| p.shown.clone()).collect();
        pending.sort_by(|a, b| a.id.cmp(&b.id));
        (pending, rx)
    }
}

/// A fresh unguessable id: `ap-` and 16 random bytes in hex.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness (never on Linux): fall back to the clock and a counter, still unique.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        return format!("ap-{t:x}-{n}");
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("ap-{hex}")
}

/// What clients see of `req`: its text cut to [`MAX_TEXT_CHARS`].
fn requested(id: String, req: &ApprovalRequest, timeout: Duration) -> Requested {
    let chars = req.risk.text.chars().count();
    let text = if chars > MAX_TEXT_CHARS {
        req.risk.text.chars().take(MAX_TEXT_CHARS).collect()
    } else {
        req.risk.text.clone()
    };
    Requested {
        id,
        turn_id: req.turn_id.clone(),
        action: req.risk.action.clone(),
        text,
        text_chars: u64::try_from(chars).unwrap_or(u64::MAX),
        timeout_secs: timeout.as_secs(),
    }
}

#[cfg(test)]
mod tests;
