//! The global turn gate: one turn at a time, busy windows, the running turn's cancel token,
//! origin and status, and the last error — one std `Mutex`, held only for a few field updates.
//! Owner turns are refused while another turn runs (`try_enter`); work Kernel starts on its own
//! waits for the gate instead (`enter_when_free`), woken when a permit is dropped.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Admits one turn at a time; cheap to clone (clones share the state).
#[derive(Debug, Clone, Default)]
pub(super) struct Gate {
    state: Arc<Mutex<State>>,
    /// Signalled whenever the running turn's permit is dropped.
    freed: Arc<Notify>,
}

/// Who started a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The owner (a message, a queued follow-up): refused as busy while another turn runs.
    #[default]
    Owner,
    /// Kernel itself (a schedule, a background job's summary): waits for the gate.
    Kernel,
}

#[derive(Debug, Default)]
struct State {
    running: Option<Running>,
    /// Refusals in the current busy window.
    refusals: u64,
    last_error: Option<String>,
    next_id: u64,
}

#[derive(Debug)]
struct Running {
    id: u64,
    origin: Origin,
    cancel: CancellationToken,
    started_at: DateTime<Utc>,
    /// Tools running now, in start order (a step may run several at once).
    tools: Vec<String>,
    /// `/steer` texts not yet handed to the turn (taken at its next step boundary).
    steers: Vec<String>,
    /// The turn's id, once it has one (a Stop button cancels only its own turn).
    turn_id: Option<String>,
    /// Its outcome is on its way to the owner ([`Permit::concluding`]): it ends in moments.
    concluding: bool,
}

/// A refused turn: another one is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Busy {
    /// True for the first refusal of this busy window.
    pub first_in_window: bool,
}

/// The running turn, as `GetStatus` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTurn {
    pub started_at: DateTime<Utc>,
    /// The tool(s) running right now, comma-separated.
    pub running_tool: Option<String>,
}

/// The turn-related part of `GetStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnStatus {
    pub running_turn: Option<RunningTurn>,
    /// The last turn error (redacted).
    pub last_error: Option<String>,
    /// The CLI delegation running now, and since when.
    pub running_cli: Option<crate::delegate::RunningCli>,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits an owner turn that `cancel` will stop, or refuses it at once.
    pub(super) fn try_enter(&self, cancel: CancellationToken) -> Result<Permit, Busy> {
        let mut s = self.lock();
        if s.running.is_some() {
            s.refusals += 1;
            return Err(Busy {
                first_in_window: s.refusals == 1,
            });
        }
        Ok(self.admit(&mut s, cancel, Origin::Owner))
    }

    /// Admits a turn of `origin` once no turn runs (waiting quietly: no busy refusal is
    /// counted); `None` when `cancel` fires first.
    pub(super) async fn enter_when_free(
        &self,
        cancel: CancellationToken,
        origin: Origin,
    ) -> Option<Permit> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut s = self.lock();
                if s.running.is_none() {
                    return Some(self.admit(&mut s, cancel, origin));
                }
            }
            tokio::select! {
                _ = &mut freed => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    fn admit(&self, s: &mut State, cancel: CancellationToken, origin: Origin) -> Permit {
        s.next_id += 1;
        let id = s.next_id;
        s.running = Some(Running {
            id,
            origin,
            cancel,
            started_at: Utc::now(),
            tools: Vec::new(),
            steers: Vec::new(),
            turn_id: None,
            concluding: false,
        });
        Permit {
            gate: self.clone(),
            id,
        }
    }

    /// Who started the running turn, if one runs.
    pub(super) fn running_origin(&self) -> Option<Origin> {
        self.lock().running.as_ref().map(|r| r.origin)
    }

    /// Whether an owner turn refused by [`Gate::try_enter`] should rather wait for the running
    /// turn: Kernel started it (the owner's message runs right after it), or its outcome is
    /// already on its way to the owner, who may answer it before the turn has quite ended.
    pub(super) fn worth_waiting_for(&self) -> bool {
        self.lock()
            .running
            .as_ref()
            .is_some_and(|r| r.origin == Origin::Kernel || r.concluding)
    }

    /// Cancels the running turn; whether there was one.
    pub(super) fn cancel(&self) -> bool {
        let s = self.lock();
        match &s.running {
            Some(r) => {
                r.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels the running turn if it is `turn_id`; whether it was.
    pub(super) fn cancel_turn(&self, turn_id: &str) -> bool {
        let s = self.lock();
        match &s.running {
            Some(r) if r.turn_id.as_deref() == Some(turn_id) => {
                r.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Hands `text` to the running turn for its next step boundary; gives it back when no turn
    /// runs.
    pub(super) fn steer(&self, text: String) -> Result<(), String> {
        match self.lock().running.as_mut() {
            Some(r) => {
                r.steers.push(text);
                Ok(())
            }
            None => Err(text),
        }
    }

    /// The running turn and the last error.
    pub(super) fn status(&self) -> TurnStatus {
        let s = self.lock();
        TurnStatus {
            running_turn: s.running.as_ref().map(|r| RunningTurn {
                started_at: r.started_at,
                running_tool: (!r.tools.is_empty()).then(|| r.tools.join(", ")),
            }),
            last_error: s.last_error.clone(),
            running_cli: None,
        }
    }

    /// Records a (redacted) error for `GetStatus`.
    pub(super) fn record_error(&self, message: &str) {
        self.lock().last_error = Some(message.to_owned());
    }
}

/// The right to run the one turn; dropping it ends the busy window.
#[derive(Debug)]
pub(super) struct Permit {
    gate: Gate,
    id: u64,
}

impl Permit {
    fn with_running(&self, f: impl FnOnce(&mut Running)) {
        let mut s = self.gate.lock();
        if let Some(r) = s.running.as_mut().filter(|r| r.id == self.id) {
            f(r);
        }
    }

    /// Marks `name` as running.
    pub(super) fn tool_started(&self, name: &str) {
        self.with_running(|r| r.tools.push(name.to_owned()));
    }

    /// Marks one running `name` as finished.
    pub(super) fn tool_finished(&self, name: &str) {
        self.with_running(|r| {
            if let Some(at) = r.tools.iter().position(|t| t == name) {
                r.tools.remove(at);
            }
        });
    }

    /// Marks every tool as finished.
    pub(super) fn tools_finished(&self) {
        self.with_running(|r| r.tools.clear());
    }

    /// Hands the running turn a new cancellation token (a turn restarted by an edit).
    pub(super) fn renew_cancel(&self, cancel: CancellationToken) {
        self.with_running(|r| r.cancel = cancel);
    }

    /// Names the running turn (for [`Gate::cancel_turn`]).
    pub(super) fn set_turn_id(&self, turn_id: &str) {
        self.with_running(|r| r.turn_id = Some(turn_id.to_owned()));
    }

    /// Whose turn this is (`None` once it no longer holds the gate).
    pub(super) fn origin(&self) -> Option<Origin> {
        let mut origin = None;
        self.with_running(|r| origin = Some(r.origin));
        origin
    }

    /// Marks the turn as concluding: its outcome is being handed to the owner, and nothing is
    /// left that could make an owner turn wait long (see [`Gate::worth_waiting_for`]).
    pub(super) fn concluding(&self) {
        self.with_running(|r| r.concluding = true);
    }

    /// Whether the owner has steered since the last [`Permit::take_steers`].
    pub(super) fn steered(&self) -> bool {
        let mut steered = false;
        self.with_running(|r| steered = !r.steers.is_empty());
        steered
    }

    /// The `/steer` texts received since the last call, oldest first.
    pub(super) fn take_steers(&self) -> Vec<String> {
        let mut steers = Vec::new();
        self.with_running(|r| steers = std::mem::take(&mut r.steers));
        steers
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut s = self.gate.lock();
        if s.running.as_ref().is_some_and(|r| r.id == self.id) {
            s.running = None;
            s.refusals = 0;
            drop(s);
            self.gate.freed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_at_a_time_with_busy_windows() {
        let gate = Gate::default();
        let permit = gate.try_enter(CancellationToken::new()).unwrap();
        assert_eq!(
            gate.try_enter(CancellationToken::new()).unwrap_err(),
            Busy {
                first_in_window: true
            }
        );
        assert_eq!(
            gate.try_enter(CancellationToken::new()).unwrap_err(),
            Busy {
                first_in_window: false
            }
        );
        drop(permit);
        let permit = gate.try_enter(CancellationToken::new()).unwrap();
        assert_eq!(
            gate.try_enter(CancellationToken::new()).unwrap_err(),
            Busy {
                first_in_window: true
            }
        );
        drop(permit);
        assert!(gate.status().running_turn.is_none());
    }

    #[tokio::test]
    async fn kernel_work_waits_for_the_gate_without_counting_as_busy() {
        let gate = Gate::default();
        let owner = gate.try_enter(CancellationToken::new()).unwrap();
        let waiter = tokio::spawn({
            let gate = gate.clone();
            async move {
                gate.enter_when_free(CancellationToken::new(), Origin::Kernel)
                    .await
                    .map(|permit| (permit.gate.running_origin(), permit))
            }
        });
        tokio::task::yield_now().await;
        assert_eq!(gate.running_origin(), Some(Origin::Owner));
        drop(owner);
        let (origin, permit) = waiter.await.unwrap().unwrap();
        assert_eq!(origin, Some(Origin::Kernel));
        // The owner's first refusal while Kernel's turn runs still opens a busy window.
        assert_eq!(
            gate.try_enter(CancellationToken::new()).unwrap_err(),
            Busy {
                first_in_window: true
            }
        );
        drop(permit);
        let cancel = CancellationToken::new();
        let _owner = gate.try_enter(CancellationToken::new()).unwrap();
        cancel.cancel();
        assert!(gate.enter_when_free(cancel, Origin::Kernel).await.is_none());
    }

    #[tokio::test]
    async fn an_owner_turn_waits_for_one_whose_answer_is_on_its_way() {
        let gate = Gate::default();
        assert!(!gate.worth_waiting_for());
        let running = gate.try_enter(CancellationToken::new()).unwrap();
        assert!(!gate.worth_waiting_for());
        running.concluding();
        assert!(gate.worth_waiting_for());
        let waiter = tokio::spawn({
            let gate = gate.clone();
            async move {
                gate.enter_when_free(CancellationToken::new(), Origin::Owner)
                    .await
                    .map(|permit| (permit.gate.worth_waiting_for(), permit))
            }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(running);
        let (next_concluding, _next) = waiter.await.unwrap().unwrap();
        assert!(!next_concluding, "the next turn starts fresh");
    }

    #[test]
    fn steers_reach_the_running_turn_in_order_and_come_back_when_none_runs() {
        let gate = Gate::default();
        assert_eq!(gate.steer("early".into()), Err("early".to_owned()));
        let permit = gate.try_enter(CancellationToken::new()).unwrap();
        assert!(!permit.steered());
        gate.steer("one".into()).unwrap();
        gate.steer("two".into()).unwrap();
        assert!(permit.steered());
        assert_eq!(permit.take_steers(), ["one", "two"]);
        assert!(!permit.steered() && permit.take_steers().is_empty());
        drop(permit);
        assert_eq!(gate.steer("late".into()), Err("late".to_owned()));
    }

    #[test]
    fn cancel_reaches_the_running_turn_only() {
        let gate = Gate::default();
        assert!(!gate.cancel());
        let token = CancellationToken::new();
        let permit = gate.try_enter(token.clone()).unwrap();
        permit.set_turn_id("t1");
        assert!(!gate.cancel_turn("t0") && !token.is_cancelled());
        assert!(gate.cancel_turn("t1"));
        assert!(gate.cancel());
        assert!(token.is_cancelled());
        drop(permit);
        assert!(!gate.cancel());
    }

    #[test]
    fn status_shows_running_tools_and_last_error() {
        let gate = Gate::default();
        let permit = gate.try_enter(CancellationToken::new()).unwrap();
        permit.tool_started("search");
        permit.tool_started("echo");
        assert_eq!(
            gate.status().running_turn.unwrap().running_tool.as_deref(),
            Some("search, echo")
        );
        permit.tool_finished("search");
        assert_eq!(
            gate.status().running_turn.unwrap().running_tool.as_deref(),
            Some("echo")
        );
        permit.tools_finished();
        assert_eq!(gate.status().running_turn.unwrap().running_tool, None);
        gate.record_error("rate limited");
        drop(permit);
        let status = gate.status();
        assert_eq!(
            (status.running_turn, status.last_error.as_deref()),
            (None, Some("rate limited"))
        );
    }
}
