//! The agent turn: `Turns::chat` runs one user message through the model and the tools and
//! streams its events; `Turns::cancel` stops it. One turn runs at a time, globally. `Turns` is
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

mod context;
mod extensions;
mod gate;
mod input;
mod media;
mod recall;
mod repair;
mod run;
mod slim;
mod summary;

use std::sync::Arc;

use chrono_tz::Tz;
use kernel_common::{Config, Redactor};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use crate::conversation::{Message, Usage};
use crate::error::ApiError;
use crate::failure::FailReason;
use crate::media::Media;
use crate::models::Models;
use crate::models::cooldown::FailoverReason;
use crate::outbox::{Outbox, OwnerDelivery};
use crate::sessions::Sessions;
use crate::skills::Skills;
use crate::store::Store;
use crate::titling::Titler;
use crate::tools::ToolRegistry;
use context::Soul;
use gate::{Busy, Gate};

pub use extensions::Extensions;
pub use gate::{Origin, RunningTurn, TurnStatus};
pub use input::{Attachment, UserInput};
pub use recall::MemoryRecall;

/// Tool calls allowed for one user message; then the model must answer without tools.
pub const MAX_TOOL_CALLS: usize = 25;

/// One event of a turn, in the order they happen.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// The turn was accepted (first event).
    Started { session_id: i64, turn_id: String },
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
    /// Speech work began: transcribing the voice notes (after `Started`, before the first model
    /// call) or synthesising the voice reply (before `Completed`).
    SpeechStarted(SpeechStage),
    /// The final answer, the usage summed over every model call, and an Ogg/Opus voice reply
    /// when one was wanted and synthesised (last event).
    Completed {
        text: String,
        usage: Usage,
        voice_reply: Option<Vec<u8>>,
    },
    /// The turn failed; the English message and the reason's arguments are redacted (last
    /// event). STT failures carry an unknown reason: their message is already localized.
    Failed { message: String, reason: FailReason },
    /// The turn was cancelled (last event).
    Cancelled,
    /// Another turn is running (only event).
    Busy { first_in_window: bool },
}

/// A step of speech work within a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeechStage {
    /// The voice notes are being transcribed (`[stt]`).
    Transcribing,
    /// The voice reply is being synthesised (`[tts]`).
    Synthesizing,
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
    /// Rounds Kernel recorded outside a turn (`record_for_kernel`), stored by whichever comes
    /// first: the recorder once the gate is free, or the next turn before it starts.
    pending_rounds: std::sync::Mutex<Vec<Message>>,
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
    pub root: CancellationToken,
    pub tasks: TaskTracker,
    pub outbox: Outbox<TurnEvent>,
}

impl Turns {
    /// The turn loop for `config` over the services in `setup`.
    pub fn new(config: &Config, setup: TurnsSetup) -> Self {
        let general = &config.general;
        Self {
            inner: Arc::new(Inner {
                gate: Gate::default(),
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
                context_rounds: general.context_rounds,
                memory_recall_k: general.memory_recall_k,
                tz: general.timezone,
                root: setup.root,
                tasks: setup.tasks,
                outbox: setup.outbox,
                pending_rounds: std::sync::Mutex::new(Vec::new()),
            }),
        }
    }

    /// Starts a turn for `input` and returns its events. Bad input — or an image larger than the
    /// current provider takes — is refused before the gate (in the owner's language); while
    /// another turn runs, the events are a single `Busy`.
    pub async fn chat(&self, input: UserInput) -> Result<TurnEvents, ApiError> {
        self.chat_for_owner(input, None).await
    }

    /// [`Turns::chat`] for an owner turn when `delivery` is set: its progress is shown to
    /// `Subscribe` clients and its outcome is queued in the outbox before the last event.
    pub async fn chat_for_owner(
        &self,
        input: UserInput,
        delivery: Option<OwnerDelivery>,
    ) -> Result<TurnEvents, ApiError> {
        let inner = &self.inner;
        let media = &inner.media;
        let input = input.accept(media.locale(), media.stt_configured())?;
        if let Some(kind) = inner.models.current_kind() {
            media::check_for_provider(&input, kind).map_err(|r| r.into_error(media.locale()))?;
        }
        let cancel = inner.root.child_token();
        let permit = match inner.gate.try_enter(cancel.clone()) {
            Ok(permit) => permit,
            // A turn Kernel started (a scheduled task) does not make the owner wait for a
            // refusal: the owner's message runs right after it.
            Err(_) if inner.gate.running_origin() == Some(Origin::Kernel) => {
                tracing::info!("a Kernel turn is running; the owner's message waits for it");
                match inner
                    .gate
                    .enter_when_free(cancel.clone(), Origin::Owner)
                    .await
                {
                    Some(permit) => permit,
                    None => return Ok(single(TurnEvent::Cancelled)),
                }
            }
            Err(Busy { first_in_window }) => {
                tracing::info!(first_in_window, "chat refused: a turn is running");
                return Ok(single(TurnEvent::Busy { first_in_window }));
            }
        };
        self.start(permit, cancel, input, delivery).await
    }

    /// Runs a turn Kernel starts on its own (a scheduled task) with `prompt`: it waits for the
    /// running turn to end instead of being refused, and its outcome reaches the owner through
    /// the outbox like an owner turn's (with no message to reply to). `None` when shutdown
    /// came first.
    pub async fn run_for_kernel(&self, prompt: String) -> Result<Option<TurnEvents>, ApiError> {
        let inner = &self.inner;
        let input = UserInput {
            text: prompt,
            attachments: Vec::new(),
            want_voice_reply: false,
        }
        .accept(inner.media.locale(), false)?;
        let cancel = inner.root.child_token();
        let Some(permit) = inner
            .gate
            .enter_when_free(cancel.clone(), Origin::Kernel)
            .await
        else {
            return Ok(None);
        };
        let delivery = Some(OwnerDelivery::default());
        self.start(permit, cancel, input, delivery).await.map(Some)
    }

    /// Stores `user` and `assistant` as one round of the current session, with no model call,
    /// before the next turn starts: once no turn runs (waiting for the gate like a Kernel
    /// turn), or by that next turn if it is admitted first. What Kernel told the owner outside a
    /// turn (a background job's result) is thus in the next turn's context. `false` when
    /// shutdown came first (the next turn still stores it).
    pub async fn record_for_kernel(
        &self,
        user: String,
        assistant: String,
    ) -> Result<bool, ApiError> {
        let inner = &self.inner;
        self.pending_rounds()
            .extend([Message::user_text(user), Message::assistant_text(assistant)]);
        let Some(_permit) = inner
            .gate
            .enter_when_free(inner.root.child_token(), Origin::Kernel)
            .await
        else {
            return Ok(false);
        };
        self.store_pending_rounds().await?;
        Ok(true)
    }

    fn pending_rounds(&self) -> std::sync::MutexGuard<'_, Vec<Message>> {
        self.inner
            .pending_rounds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the rounds [`Turns::record_for_kernel`] left pending; the caller holds the gate.
    async fn store_pending_rounds(&self) -> Result<(), ApiError> {
        let rounds = std::mem::take(&mut *self.pending_rounds());
        if rounds.is_empty() {
            return Ok(());
        }
        let session = self.inner.sessions.current().await?;
        self.inner
            .store
            .append_messages(session.id, &rounds)
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(
            session = session.id,
            messages = rounds.len(),
            "rounds Kernel recorded outside a turn stored"
        );
        Ok(())
    }

    /// Whether a turn runs now.
    pub fn is_running(&self) -> bool {
        self.inner.gate.running_origin().is_some()
    }

    /// Spawns the admitted turn.
    async fn start(
        &self,
        permit: gate::Permit,
        cancel: CancellationToken,
        input: input::Accepted,
        delivery: Option<OwnerDelivery>,
    ) -> Result<TurnEvents, ApiError> {
        let inner = &self.inner;
        if let Err(e) = self.store_pending_rounds().await {
            tracing::error!(error = %e, "cannot store the rounds Kernel recorded outside a turn");
        }
        let session = inner.sessions.current().await?;
        let model = inner.models.current()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let turn = run::Turn::new(run::TurnSetup {
            turns: self.clone(),
            permit,
            events: tx,
            cancel,
            session_id: session.id,
            model,
            input,
            delivery,
        });
        let span = tracing::info_span!("turn", session = session.id, turn = %turn.id());
        inner.tasks.spawn(turn.run().instrument(span));
        Ok(rx)
    }

    /// Cancels the running turn; whether one was running.
    pub fn cancel(&self) -> bool {
        let cancelled = self.inner.gate.cancel();
        tracing::info!(cancelled, "cancel requested");
        cancelled
    }

    /// The running turn (if any) and the last error, for `GetStatus`.
    pub fn status(&self) -> TurnStatus {
        self.inner.gate.status()
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }
}

#[cfg(test)]
mod tests;
