//! The agent turn: `Turns::chat` runs one user message through the model and the tools and
//! streams its events; `Turns::cancel` stops it. One turn runs at a time per session (the main
//! lane: one for every message naming no session), at most `general.max_parallel_turns` at
//! once (`gate.rs`). `Turns` is
//! handed the services it uses (sessions, models, titles, media, the tool registry, the outbox);
//! it never sees the `Agent`.
//!
//! The turn runs in its own task (tracked for shutdown), so a client that disconnects does not
//! stop it; its events go through an unbounded channel and are dropped once nobody listens.
//! Media first: received attachments are kept under `downloads/` and voice notes transcribed
//! (under the turn's token) before anything is stored; with `want_voice_reply` the final answer
//! is also synthesised (`Completed.voice_reply`; text only when that fails or is cancelled).
//! What is stored, and when: the user message before the first model call, then each assistant
//! message and each step's tool results (one user message) in their own transactions, slimmed;
//! the final answer after the voice reply, with an owner turn's outbox item (`outbox.rs`).
//! A cancelled or failed model stream keeps its partial text: it is stored as an assistant
//! message when it has any, since the owner saw it. A model call that fails with a provider
//! failure before any answer text streamed continues on the next usable fallback provider
//! (`FailedOver`); one that streamed text never does.

mod cut_off;
mod edit;
mod extensions;
mod gate;
mod hook;
mod input;
mod intake;
mod live;
mod media;
mod question_reply;
mod queue;
mod recall;
mod retry;
mod run;
mod session_history;
mod soul;
mod spend;
mod start;
mod steer;
mod tool_line;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono_tz::Tz;
use kernel_common::config::context::{ContextLimits, ContextWindow};
use kernel_common::{Config, Redactor};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use crate::approvals::Approvals;
use crate::ask::Asks;
use crate::conversation::{Message, Usage};
use crate::error::ApiError;
use crate::failure::FailReason;
use crate::media::Media;
use crate::models::cooldown::FailoverReason;
use crate::models::{CurrentModel, Models};
use crate::outbox::{Outbox, OwnerDelivery};
use crate::sessions::Sessions;
use crate::skills::Skills;
use crate::store::Store;
use crate::titling::Titler;
use crate::tools::ToolRegistry;
use crate::usage::UsageLedger;
use gate::{Busy, Gate, Refused};
use soul::Soul;

pub(crate) use crate::request::context::MAX_TOOL_CALLS;
use crate::request::history::Limits;
use crate::request::{context, slim, tokens};

pub use crate::request::context::RECALL_HEADING;
pub use crate::request::session_summary::{MAX_ENTRIES as SUMMARY_MAX_ENTRIES, SessionSummary};
pub use cut_off::Rerun;
pub use edit::{Edit, Edited};
pub use extensions::Extensions;
pub use gate::{DEFAULT_MAX_PARALLEL, Lane, Origin, RunningTurn, Scope, TurnStatus};
pub use hook::{FoldHook, RoundHook};
pub use input::{Attachment, UserInput};
pub use intake::IntakeKeys;
pub use recall::MemoryRecall;
pub use retry::Retried;
pub use spend::Continued;
pub use steer::Steered;

/// One event of a turn, in the order they happen.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// The turn was accepted (first event).
    /// `left_out`: attachments of the message refused one by one and left out (worded in
    /// `general.locale`), the rest running.
    Started {
        session_id: i64,
        turn_id: String,
        left_out: Vec<String>,
    },
    /// A piece of answer text.
    TextDelta(String),
    /// A tool call began; `input_summary` is one redacted line of at most 120 characters.
    ToolStarted {
        call_id: String,
        tool_name: String,
        input_summary: String,
    },
    /// A CLI delegation's subprocess started (reported by the tool while it runs).
    CliStarted { cli: String, cwd: String },
    /// A tool call ended.
    ToolFinished {
        call_id: String,
        ok: bool,
        summary: String,
    },
    /// The model call moved on from provider `from` to `to` (its default `model`): `from`
    /// failed before any answer text, or is cooling down (`reason`).
    FailedOver {
        from: String,
        to: String,
        model: String,
        reason: FailoverReason,
    },
    /// The model call failed transiently before any answer text and is retried on the same
    /// provider after `scheduled.wait`.
    RetryScheduled {
        provider: String,
        scheduled: crate::llm::retry::Scheduled,
    },
    /// Speech work began: transcribing the voice notes (after `Started`, before the first model
    /// call) or synthesising the voice reply (before `Completed`).
    SpeechStarted(SpeechStage),
    /// The final answer, the usage summed over every model call, and an Ogg/Opus voice reply
    /// when one was wanted and synthesised (last event).
    Completed {
        text: String,
        usage: Usage,
        voice_reply: Option<Vec<u8>>,
        /// The model's reasoning text over the turn (empty when none); never in `text`.
        reasoning: String,
    },
    /// The turn failed; the English message and the reason's arguments are redacted (last
    /// event). STT failures carry an unknown reason: their message is already localized.
    Failed { message: String, reason: FailReason },
    /// The turn was cancelled (last event).
    Cancelled,
    /// Another turn is running (only event).
    Busy { first_in_window: bool },
    /// A `[budget]` limit is reached: no turn started, no model called (only event); `day` and
    /// `month` are the override keys.
    BudgetExceeded {
        over: crate::budget::LimitState,
        day: String,
        month: String,
    },
    /// The `ask_user` tool asks the owner (`id` names it for the answer).
    Question {
        id: String,
        text: String,
        options: Vec<String>,
    },
    /// The question is no longer pending (answered, timed out, cancelled).
    QuestionClosed { id: String },
    /// The message answered the pending question `id` instead of starting a turn (only event).
    Answered { id: String },
    /// A risky action waits for the owner's approval (clients following the owner's turns see
    /// it on `Subscribe`, from the approvals service).
    ApprovalRequested(crate::tools::ApprovalShown),
    /// The approval is no longer pending.
    ApprovalClosed { id: String, decision: String },
    /// Some of the request's idempotency `keys` were taken by the turn `turn_id`: no turn was
    /// started (only event; a turn that finds them taken as it stores its user message ends
    /// with it instead of an outcome).
    AlreadyTaken { keys: Vec<String>, turn_id: String },
}

/// A step of speech work within a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeechStage {
    /// The voice notes are being transcribed (`[stt]`).
    Transcribing,
    /// The voice reply is being synthesised (`[tts]`).
    Synthesizing,
}

/// What `/compact` did: the history's estimated tokens before and after, and the rounds the
/// session summary now covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compacted {
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary_rounds: u64,
}

/// How full the current session's next request would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextFill {
    /// System prompt, tools, summary and history, estimated (and corrected by the last usage).
    pub estimated_tokens: u64,
    /// What a request may hold (window minus the output reserve).
    pub budget_tokens: u64,
    pub has_summary: bool,
}

/// The events of one `Chat`.
pub type TurnEvents = mpsc::UnboundedReceiver<TurnEvent>;

/// Events that are just `event`.
fn single(event: TurnEvent) -> TurnEvents {
    let (tx, rx) = mpsc::unbounded_channel();
    let _ = tx.send(event);
    rx
}

/// The turn loop: the gate (one turn at a time) and what a turn uses. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Turns {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    gate: Gate,
    /// The running turns an owner's edit can reach (`edit.rs`).
    live: live::LiveTurns,
    tools: ToolRegistry,
    soul: Soul,
    /// The skills index (part of the system prompt).
    skills: Skills,
    recall: Arc<dyn MemoryRecall>,
    /// Scrubs every configured secret from summaries and error texts.
    redactor: Redactor,
    /// Downloads, speech-to-text and text-to-speech.
    media: Media,
    store: Store,
    sessions: Sessions,
    models: Models,
    titler: Titler,
    /// Told after each completed round (auto memory).
    after_round: RoundHook,
    /// Told when rounds fold into a session's summary (the summary rewriter).
    after_fold: FoldHook,
    /// History rounds sent with each request.
    context_rounds: usize,
    /// Memories recalled per turn (0: none).
    memory_recall_k: usize,
    tz: Tz,
    /// Cancelled at shutdown; every turn's token is a child of it.
    root: CancellationToken,
    /// Running turns are tracked here (shutdown waits for them).
    tasks: TaskTracker,
    /// Where owner turns queue their outcome and show their progress.
    outbox: Outbox<TurnEvent>,
    /// The pending `ask_user` question; an owner message answers it.
    asks: Asks,
    /// How long a question to the owner waits (`general.ask_timeout_secs`).
    ask_timeout: std::time::Duration,
    /// The owner's approvals of risky tool calls.
    approvals: Approvals,
    /// Signalled when a `/next` message is queued (`queue.rs`).
    follow_ups: tokio::sync::Notify,
    /// Every model call's tokens.
    usage: UsageLedger,
    /// The `[budget]`: new turns and model steps stop at a limit.
    budget: crate::budget::Budget,
    /// `telegram.show_cost`: a cost footer under each owner answer.
    show_cost: bool,
    /// Per provider: its context settings and `max_tokens` (the budget of a request).
    windows: BTreeMap<String, (ContextLimits, Option<u32>)>,
    /// Per session: the provider's input tokens over the estimate, from the last call.
    calibration: tokens::Calibration,
    /// Rounds Kernel recorded outside a turn (`record_for_kernel`), stored by whichever comes
    /// first: the recorder once its session's lane is free, or that session's next turn before
    /// it starts.
    pending_rounds: std::sync::Mutex<Vec<PendingRound>>,
    /// The `/next` queues (by session; `None`: the main lane's) whose head has a task waiting
    /// to run it (`queue.rs`).
    queue_runners: std::sync::Mutex<std::collections::HashSet<Option<i64>>>,
}

/// A round Kernel recorded outside a turn, waiting to be stored in its session.
#[derive(Debug)]
struct PendingRound {
    session_id: i64,
    messages: Vec<Message>,
}

/// The services and settings a [`Turns`] is built from.
#[derive(Debug)]
pub struct TurnsSetup {
    /// The tool registry offered to the model.
    pub tools: ToolRegistry,
    pub recall: Arc<dyn MemoryRecall>,
    /// The skills whose index joins the system prompt.
    pub skills: Skills,
    pub media: Media,
    pub store: Store,
    pub sessions: Sessions,
    pub models: Models,
    pub titler: Titler,
    /// Told after each completed round.
    pub after_round: RoundHook,
    /// Told when rounds fold into a session's summary.
    pub after_fold: FoldHook,
    pub root: CancellationToken,
    pub tasks: TaskTracker,
    pub outbox: Outbox<TurnEvent>,
    pub usage: UsageLedger,
    pub budget: crate::budget::Budget,
    pub approvals: Approvals,
}

impl Turns {
    /// The turn loop for `config` over the services in `setup`.
    pub fn new(config: &Config, setup: TurnsSetup) -> Self {
        let general = &config.general;
        Self {
            inner: Arc::new(Inner {
                gate: Gate::new(general.max_parallel_turns),
                live: live::LiveTurns::default(),
                tools: setup.tools,
                soul: Soul::new(general.soul_file.clone()),
                skills: setup.skills,
                recall: setup.recall,
                redactor: config.redactor(),
                media: setup.media,
                store: setup.store,
                sessions: setup.sessions,
                models: setup.models,
                titler: setup.titler,
                after_round: setup.after_round,
                after_fold: setup.after_fold,
                context_rounds: general.context_rounds,
                memory_recall_k: general.memory_recall_k,
                tz: general.timezone,
                root: setup.root,
                tasks: setup.tasks,
                outbox: setup.outbox,
                asks: Asks::default(),
                ask_timeout: general.ask_timeout,
                approvals: setup.approvals,
                follow_ups: tokio::sync::Notify::new(),
                usage: setup.usage,
                budget: setup.budget,
                show_cost: config.telegram.show_cost,
                windows: config
                    .providers
                    .values()
                    .map(|p| (p.name.clone(), (p.context.clone(), p.max_tokens)))
                    .collect(),
                calibration: tokens::Calibration::default(),
                pending_rounds: std::sync::Mutex::new(Vec::new()),
                queue_runners: std::sync::Mutex::new(std::collections::HashSet::new()),
            }),
        }
    }

    /// Cancels every running turn; whether one was running.
    pub fn cancel(&self) -> bool {
        self.cancel_in(Scope::All) > 0
    }

    /// Cancels the running turns in `scope` (a session's, the main lane's, all); how many.
    pub fn cancel_in(&self, scope: Scope) -> usize {
        let cancelled = self.inner.gate.cancel(scope);
        tracing::info!(cancelled, ?scope, "cancel requested");
        cancelled
    }

    /// The running turn of session `session_id` (its id, start, tools), if one runs.
    pub fn running(&self, session_id: i64) -> Option<RunningTurn> {
        self.inner.gate.running(session_id)
    }

    /// The session of the running turn `turn_id`, if it runs (for a client acting on a turn).
    pub fn running_session(&self, turn_id: &str) -> Option<i64> {
        self.inner.gate.session_of(turn_id)
    }

    /// Cancels the running turn if it is `turn_id` (a Stop button of an older turn does
    /// nothing); whether it was.
    pub fn cancel_turn(&self, turn_id: &str) -> bool {
        let cancelled = self.inner.gate.cancel_turn(turn_id);
        tracing::info!(cancelled, turn = turn_id, "cancel of one turn requested");
        cancelled
    }

    /// The running turns (the main one first) and the last error, for `GetStatus`.
    pub fn status(&self) -> TurnStatus {
        self.inner.gate.status()
    }

    /// The pending `ask_user` question and its answers (the tool is registered over it).
    pub fn asks(&self) -> &Asks {
        &self.inner.asks
    }

    /// The approvals service risky tool calls wait on.
    pub fn approvals(&self) -> &Approvals {
        &self.inner.approvals
    }

    /// The configured providers and the current choice.
    pub fn models(&self) -> &Models {
        &self.inner.models
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// The context window of `model` on provider `provider`.
    fn window(&self, provider: &str, model: &str) -> ContextWindow {
        match self.inner.windows.get(provider) {
            Some((limits, max_tokens)) => limits.window(model, *max_tokens),
            None => ContextLimits::default().window(model, None),
        }
    }

    /// Folds every round of the current session but the last two into its summary now.
    pub async fn compact(&self) -> Result<Compacted, ApiError> {
        let inner = &self.inner;
        let session = inner.sessions.current().await?;
        let kind = inner.models.current()?.kind;
        let compaction =
            session_history::compact(&inner.store, session.id, inner.context_rounds, kind)
                .await
                .map_err(ApiError::internal)?;
        if compaction.folded {
            inner.after_fold.folded(session.id);
        }
        let (tokens_before, tokens_after) = (compaction.before, compaction.after);
        let summary_rounds = session_history::load(&inner.store, session.id, Limits::peek(kind))
            .await
            .map_err(ApiError::internal)?
            .summary
            .rounds;
        tracing::info!(
            session = session.id,
            tokens_before,
            tokens_after,
            summary_rounds,
            "session compacted"
        );
        Ok(Compacted {
            tokens_before,
            tokens_after,
            summary_rounds,
        })
    }

    /// The context fill of session `session_id` (the budget alone without one), for `/status`.
    pub async fn context_fill(&self, session_id: Option<i64>) -> Result<ContextFill, ApiError> {
        let inner = &self.inner;
        let model = inner.models.current()?;
        let budget_tokens = u64::from(self.window(&model.name, &model.model).input_budget());
        let Some(session_id) = session_id else {
            return Ok(ContextFill {
                budget_tokens,
                ..ContextFill::default()
            });
        };
        let history = session_history::load(&inner.store, session_id, Limits::peek(model.kind))
            .await
            .map_err(ApiError::internal)?;
        let system = context::with_skills(
            inner.soul.system_prompt().await,
            &inner.skills.index().await,
        );
        let estimate = tokens::prefix_tokens(&system, &inner.tools.specs()) + history.tokens();
        Ok(ContextFill {
            estimated_tokens: inner.calibration.correct(session_id, estimate),
            budget_tokens,
            has_summary: !history.summary.is_empty(),
        })
    }
}

/// Benchmark support (`kernel-bench`): a turn's request for `session_id` — the summary and the
/// unfolded rounds read from the store, built by `request::build` (folded when over the ceiling
/// or `token_budget`, repaired, the summary placed, the new message appended), the fold saved.
/// Returns the request's messages.
#[doc(hidden)]
#[cfg(any(test, feature = "test-support"))]
pub async fn assemble_for_bench(
    store: &Store,
    session_id: i64,
    rounds: usize,
    token_budget: u64,
    user: &crate::conversation::Message,
) -> Result<Vec<crate::conversation::Message>, crate::store::StoreError> {
    let stored = session_history::read(store, session_id).await?;
    let built = crate::request::build(crate::request::RequestInputs {
        persona: Arc::from(""),
        skills_index: "",
        tools: &[],
        stored,
        rounds,
        token_budget,
        kind: kernel_common::config::ProviderKind::Claude,
        user,
        now: "2026-01-01T00:00:00+0800 (Asia/Shanghai)",
        memories: &[],
    });
    if let Some(folded) = built.folded {
        session_history::save_fold(store, session_id, &built.summary, folded).await?;
    }
    Ok(built.messages)
}

#[cfg(test)]
mod tests;
