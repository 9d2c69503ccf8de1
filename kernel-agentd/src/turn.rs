//! The agent turn: `Agent::chat` runs one user message through the model and the tools and
//! streams its events; `Agent::cancel_turn` stops it. One turn runs at a time, globally.
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
//! message when it has any, since the owner saw it.

mod extensions;
mod gate;
mod input;
mod media;
mod run;
mod summary;

use std::sync::{Arc, Mutex};

use kernel_common::{Config, Redactor};
use tokio::sync::mpsc;
use tracing::Instrument as _;

use crate::agent::Agent;
use crate::context::{MemoryRecall, Soul};
use crate::conversation::Usage;
use crate::error::ApiError;
use crate::media::Media;
use crate::outbox::OwnerDelivery;
use crate::tools::ToolRegistry;

pub use extensions::Extensions;
pub use gate::{Busy, Gate, Permit, RunningTurn, TurnStatus};
pub use input::{
    Accepted, Attachment, IMAGE_TYPES, MAX_ATTACHMENT_BYTES, MAX_TEXT_CHARS, Part, UserInput,
    voice_text,
};
pub use summary::SUMMARY_CHARS;

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
    /// The turn failed; the message is redacted (last event).
    Failed { message: String },
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

/// The turn loop's share of the agent's state (`Agent.inner.turns`).
#[derive(Debug)]
pub struct Turns {
    pub(crate) gate: Gate,
    pub(crate) tools: ToolRegistry,
    pub(crate) soul: Soul,
    pub(crate) recall: Mutex<Arc<dyn MemoryRecall>>,
    /// Scrubs every configured secret from summaries and error texts.
    pub(crate) redactor: Redactor,
    /// Downloads, speech-to-text and text-to-speech.
    pub(crate) media: Media,
}

impl Turns {
    /// Fresh state for `config` using `ext`'s registry (the agent adds the built-in tools to it)
    /// and `ext`'s recall if it has one, else `recall`.
    pub fn new(config: &Config, recall: Arc<dyn MemoryRecall>, ext: Extensions) -> Self {
        Self {
            gate: Gate::default(),
            tools: ext.tools,
            soul: Soul::new(config.general.soul_file.clone()),
            recall: Mutex::new(ext.recall.unwrap_or(recall)),
            redactor: config.redactor(),
            media: Media::new(config),
        }
    }
}

impl Agent {
    /// Starts a turn for `input` and returns its events. Bad input — or an image larger than the
    /// current provider takes — is refused before the gate (in the owner's language); while
    /// another turn runs, the events are a single `Busy`.
    pub async fn chat(&self, input: UserInput) -> Result<TurnEvents, ApiError> {
        self.chat_for_owner(input, None).await
    }

    /// [`Agent::chat`] for an owner turn when `delivery` is set: its progress is shown to
    /// `Subscribe` clients and its outcome is queued in the outbox before the last event.
    pub async fn chat_for_owner(
        &self,
        input: UserInput,
        delivery: Option<OwnerDelivery>,
    ) -> Result<TurnEvents, ApiError> {
        let media = &self.inner.turns.media;
        let input = input.accept(media.locale(), media.stt_configured())?;
        let kind = self.provider_kind();
        media::check_for_provider(&input, kind).map_err(|r| r.into_error(media.locale()))?;
        let cancel = self.inner.root.child_token();
        let permit = match self.inner.turns.gate.try_enter(cancel.clone()) {
            Ok(permit) => permit,
            Err(Busy { first_in_window }) => {
                tracing::info!(first_in_window, "chat refused: a turn is running");
                let (tx, rx) = mpsc::unbounded_channel();
                let _ = tx.send(TurnEvent::Busy { first_in_window });
                return Ok(rx);
            }
        };
        let session = self.current_session().await?;
        let (provider, model) = self.current_provider()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let turn = run::Turn::new(run::TurnSetup {
            agent: self.clone(),
            permit,
            events: tx,
            cancel,
            session_id: session.id,
            provider,
            model,
            kind,
            input,
            delivery,
        });
        let span = tracing::info_span!("turn", session = session.id, turn = %turn.id());
        self.inner.tasks.spawn(turn.run().instrument(span));
        Ok(rx)
    }

    /// Cancels the running turn; whether one was running.
    pub fn cancel_turn(&self) -> bool {
        let cancelled = self.inner.turns.gate.cancel();
        tracing::info!(cancelled, "cancel requested");
        cancelled
    }

    /// The running turn (if any), the running CLI and the last error, for `GetStatus`.
    pub fn turn_status(&self) -> TurnStatus {
        TurnStatus {
            running_cli: self.running_cli(),
            ..self.inner.turns.gate.status()
        }
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.turns.tools
    }

    /// Plugs in long-term memory recall (used from the next turn on).
    pub fn set_memory_recall(&self, recall: Arc<dyn MemoryRecall>) {
        *self
            .inner
            .turns
            .recall
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = recall;
    }

    fn memory_recall(&self) -> Arc<dyn MemoryRecall> {
        self.inner
            .turns
            .recall
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The wire kind (`claude`, `openai_compat`) of the current provider.
    fn provider_kind(&self) -> &'static str {
        let name = self.selection().provider;
        self.config()
            .providers
            .get(&name)
            .map_or("", |p| p.kind.as_str())
    }
}
