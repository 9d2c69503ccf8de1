//! The turn gate: one turn per session, at most `general.max_parallel_turns` at once; busy
//! windows, each running turn's cancel token, origin, steers and status, and the last error —
//! one std `Mutex`, held only for a few field updates. A turn runs in a [`Lane`]: the main lane
//! (messages with no session of their own, Kernel's scheduled work: one turn at a time, as
//! before topics) or a session's own lane (a Telegram topic, a `Chat` naming its session).
//! Owner turns are refused while their lane runs a turn (`try_enter`); work Kernel starts on its
//! own waits for the gate instead (`enter_when_free`), woken when a permit is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How many turns run at once when nothing else is configured (`general.max_parallel_turns`).
pub const DEFAULT_MAX_PARALLEL: usize = 3;

/// Admits one turn per lane, a bounded number at once; cheap to clone (clones share the state).
#[derive(Debug, Clone)]
pub(super) struct Gate {
    state: Arc<Mutex<State>>,
    /// Signalled whenever a running turn's permit is dropped.
    freed: Arc<Notify>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PARALLEL)
    }
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

/// Where a turn runs: its session and whether it is the main lane's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    pub session_id: i64,
    /// The main lane: a message that named no session (it runs in the current one). One main
    /// turn at a time, whichever session is current.
    pub main: bool,
}

impl Lane {
    /// The main lane, in the current session `session_id`.
    pub fn main(session_id: i64) -> Self {
        Self {
            session_id,
            main: true,
        }
    }

    /// Session `session_id`'s own lane.
    pub fn session(session_id: i64) -> Self {
        Self {
            session_id,
            main: false,
        }
    }

    /// Whether a turn in `self` and one in `other` cannot run at once: same session, or both
    /// in the main lane.
    fn conflicts(&self, other: &Lane) -> bool {
        self.session_id == other.session_id || (self.main && other.main)
    }
}

/// Which running turns a cancel or a steer reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every running turn.
    All,
    /// The main lane's turn.
    Main,
    /// The turn of this session.
    Session(i64),
}

impl Scope {
    fn covers(&self, lane: &Lane) -> bool {
        match self {
            Scope::All => true,
            Scope::Main => lane.main,
            Scope::Session(id) => lane.session_id == *id,
        }
    }
}

/// The busy-window key of the main lane (session ids are positive).
const MAIN_WINDOW: i64 = 0;

#[derive(Debug)]
struct State {
    running: Vec<Running>,
    /// How many turns may run at once.
    max_parallel: usize,
    /// Refusals in the current busy window, per lane (`MAIN_WINDOW` or a session id).
    refusals: HashMap<i64, u64>,
    last_error: Option<String>,
    next_id: u64,
}

/// The `/steer` texts a turn takes at a step boundary.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Steers {
    /// Oldest first.
    pub texts: Vec<String>,
    /// One of them carried content from outside the owner: the turn is outside content now.
    pub outside: bool,
}

#[derive(Debug)]
struct Running {
    id: u64,
    lane: Lane,
    origin: Origin,
    cancel: CancellationToken,
    started_at: DateTime<Utc>,
    /// Tools running now, in start order (a step may run several at once).
    tools: Vec<String>,
    /// `/steer` texts not yet handed to the turn (taken at its next step boundary).
    steers: Vec<String>,
    /// One of those carried content from outside the owner (a `/steer` replying to a forward).
    steered_outside: bool,
    /// The turn's id, once it has one (a Stop button cancels only its own turn).
    turn_id: Option<String>,
    /// Its outcome is on its way to the owner ([`Permit::concluding`]): it ends in moments.
    concluding: bool,
}

/// Why a turn was not admitted at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Its lane runs a turn.
    Busy(Busy),
    /// `max_parallel_turns` turns run: it may wait for a free slot.
    Full,
}

/// A refused turn: another one is running in its lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Busy {
    /// True for the first refusal of this busy window.
    pub first_in_window: bool,
}

/// A running turn, as `GetStatus` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTurn {
    pub started_at: DateTime<Utc>,
    /// The tool(s) running right now, comma-separated.
    pub running_tool: Option<String>,
    /// The session it runs in.
    pub session_id: i64,
    /// Its id, once it has one.
    pub turn_id: Option<String>,
}

/// The turn-related part of `GetStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnStatus {
    /// The main lane's turn, or else the oldest running one.
    pub running_turn: Option<RunningTurn>,
    /// Every running turn, oldest first.
    pub running_turns: Vec<RunningTurn>,
    /// The last turn error (redacted).
    pub last_error: Option<String>,
    /// The CLI delegation running now, and since when.
    pub running_cli: Option<crate::delegate::RunningCli>,
}

impl Running {
    fn shown(&self) -> RunningTurn {
        RunningTurn {
            started_at: self.started_at,
            running_tool: (!self.tools.is_empty()).then(|| self.tools.join(", ")),
            session_id: self.lane.session_id,
            turn_id: self.turn_id.clone(),
        }
    }
}

impl Gate {
    /// A gate letting `max_parallel` turns (at least one) run at once.
    pub(super) fn new(max_parallel: usize) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                running: Vec::new(),
                max_parallel: max_parallel.max(1),
                refusals: HashMap::new(),
                last_error: None,
                next_id: 0,
            })),
            freed: Arc::new(Notify::new()),
        }
    }

    /// How many turns run at once at most.
    pub(super) fn max_parallel(&self) -> usize {
        self.lock().max_parallel
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits an owner turn in `lane` that `cancel` will stop, or refuses it at once: busy
    /// when its lane runs a turn, full when `max_parallel_turns` run.
    pub(super) fn try_enter(
        &self,
        lane: Lane,
        cancel: CancellationToken,
    ) -> Result<Permit, Refused> {
        let mut s = self.lock();
        if s.running.iter().any(|r| r.lane.conflicts(&lane)) {
            let window = if lane.main {
                MAIN_WINDOW
            } else {
                lane.session_id
            };
            let refusals = s.refusals.entry(window).or_default();
            *refusals += 1;
            return Err(Refused::Busy(Busy {
                first_in_window: *refusals == 1,
            }));
        }
        if s.running.len() >= s.max_parallel {
            return Err(Refused::Full);
        }
        Ok(self.admit(&mut s, lane, cancel, Origin::Owner))
    }

    /// Admits a turn of `origin` in `lane` once its lane is free and a slot is (waiting
    /// quietly: no busy refusal is counted); `None` when `cancel` fires first.
    pub(super) async fn enter_when_free(
        &self,
        lane: Lane,
        cancel: CancellationToken,
        origin: Origin,
    ) -> Option<Permit> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut s = self.lock();
                if !s.running.iter().any(|r| r.lane.conflicts(&lane))
                    && s.running.len() < s.max_parallel
                {
                    return Some(self.admit(&mut s, lane, cancel, origin));
                }
            }
            tokio::select! {
                _ = &mut freed => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    fn admit(
        &self,
        s: &mut State,
        lane: Lane,
        cancel: CancellationToken,
        origin: Origin,
    ) -> Permit {
        s.next_id += 1;
        let id = s.next_id;
        s.running.push(Running {
            id,
            lane,
            origin,
            cancel,
            started_at: Utc::now(),
            tools: Vec::new(),
            steers: Vec::new(),
            steered_outside: false,
            turn_id: None,
            concluding: false,
        });
        Permit {
            gate: self.clone(),
            id,
        }
    }

    /// Who started the running turn in `scope` (the oldest), if one runs.
    pub(super) fn running_origin(&self, scope: Scope) -> Option<Origin> {
        let s = self.lock();
        s.running
            .iter()
            .find(|r| scope.covers(&r.lane))
            .map(|r| r.origin)
    }

    /// Whether an owner turn in `lane` refused by [`Gate::try_enter`] should rather wait: the
    /// gate is only full, or the turn in its lane was started by Kernel (the owner's message
    /// runs right after it), or its outcome is already on its way to the owner, who may answer
    /// it before the turn has quite ended.
    pub(super) fn worth_waiting_for(&self, lane: Lane) -> bool {
        let s = self.lock();
        let mut blocking = s
            .running
            .iter()
            .filter(|r| r.lane.conflicts(&lane))
            .peekable();
        blocking.peek().is_none() || blocking.all(|r| r.origin == Origin::Kernel || r.concluding)
    }

    /// Cancels the running turns in `scope`; how many there were.
    pub(super) fn cancel(&self, scope: Scope) -> usize {
        let s = self.lock();
        let mut cancelled = 0;
        for r in s.running.iter().filter(|r| scope.covers(&r.lane)) {
            r.cancel.cancel();
            cancelled += 1;
        }
        cancelled
    }

    /// Cancels the running turn `turn_id`; whether it was running.
    pub(super) fn cancel_turn(&self, turn_id: &str) -> bool {
        let s = self.lock();
        match s
            .running
            .iter()
            .find(|r| r.turn_id.as_deref() == Some(turn_id))
        {
            Some(r) => {
                r.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Hands `text` to the running turn in `scope` (the oldest) for its next step boundary
    /// (`outside`: it carries content from outside the owner); gives it back when none runs.
    pub(super) fn steer(&self, scope: Scope, text: String, outside: bool) -> Result<(), String> {
        let mut s = self.lock();
        match s.running.iter_mut().find(|r| scope.covers(&r.lane)) {
            Some(r) => {
                r.steers.push(text);
                r.steered_outside |= outside;
                Ok(())
            }
            None => Err(text),
        }
    }

    /// The running turn of session `session_id`, if one runs.
    pub(super) fn running(&self, session_id: i64) -> Option<RunningTurn> {
        let s = self.lock();
        s.running
            .iter()
            .find(|r| r.lane.session_id == session_id)
            .map(Running::shown)
    }

    /// The session of running turn `turn_id`, if it runs.
    pub(super) fn session_of(&self, turn_id: &str) -> Option<i64> {
        let s = self.lock();
        s.running
            .iter()
            .find(|r| r.turn_id.as_deref() == Some(turn_id))
            .map(|r| r.lane.session_id)
    }

    /// The running turns and the last error.
    pub(super) fn status(&self) -> TurnStatus {
        let s = self.lock();
        let running_turns: Vec<RunningTurn> = s.running.iter().map(Running::shown).collect();
        let running_turn = s
            .running
            .iter()
            .find(|r| r.lane.main)
            .or(s.running.first())
            .map(Running::shown);
        TurnStatus {
            running_turn,
            running_turns,
            last_error: s.last_error.clone(),
            running_cli: None,
        }
    }

    /// Records a (redacted) error for `GetStatus`.
    pub(super) fn record_error(&self, message: &str) {
        self.lock().last_error = Some(message.to_owned());
    }
}

/// The right to run one turn; dropping it ends its lane's busy window.
#[derive(Debug)]
pub(super) struct Permit {
    gate: Gate,
    id: u64,
}

impl Permit {
    fn with_running(&self, f: impl FnOnce(&mut Running)) {
        let mut s = self.gate.lock();
        if let Some(r) = s.running.iter_mut().find(|r| r.id == self.id) {
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

    /// Where this turn runs (`None` once it no longer holds the gate).
    pub(super) fn lane(&self) -> Option<Lane> {
        let mut lane = None;
        self.with_running(|r| lane = Some(r.lane));
        lane
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

    /// The `/steer` texts received since the last call, oldest first, and whether any of them
    /// carried content from outside the owner.
    pub(super) fn take_steers(&self) -> Steers {
        let mut steers = Steers::default();
        self.with_running(|r| {
            steers = Steers {
                texts: std::mem::take(&mut r.steers),
                outside: std::mem::take(&mut r.steered_outside),
            }
        });
        steers
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut s = self.gate.lock();
        if let Some(at) = s.running.iter().position(|r| r.id == self.id) {
            let ended = s.running.remove(at);
            s.refusals.remove(&ended.lane.session_id);
            if !s.running.iter().any(|r| r.lane.main) {
                s.refusals.remove(&MAIN_WINDOW);
            }
            drop(s);
            self.gate.freed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests;
