//! One running turn: media in, context, the model/tool loop, cancellation, persistence, the
//! voice reply and the final event.

mod deliver;
mod fit;
mod media;
mod model;
mod persist;
mod prepare;
mod repeat;
mod restart;
mod steer;
mod tools;

use tools::limit_output;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::gate::{Origin, Permit};
use super::input::{Accepted, Part};
use super::intake::IntakeKeys;
use super::tool_line::{input_line, result_line};
use super::{MAX_TOOL_CALLS, TurnEvent, Turns};
use kernel_common::config::Locale;

use crate::conversation::{Block, Message, Role, ToolSpec, Usage};
use crate::failure::FailReason;
use crate::models::CurrentModel;
use crate::models::cooldown::FailoverReason;
use crate::outbox::OwnerDelivery;
use crate::store::intake_keys::KeysTaken;
use crate::tools::{ToolContext, ToolEvent, ToolEvents, ToolOutput};

/// The result of a call that was running (or about to run) when the owner cancelled.
const CANCELLED_BY_USER: &str = "cancelled by the user";
/// How long cancelled tools may take to notice their token before they are dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Appended (in memory only) to the last message before the final, tool-less model call (for
/// the model: the prompt's language).
fn limit_note() -> String {
    format!(
        "[系统提示] 本条消息的工具调用已达上限（{MAX_TOOL_CALLS} 次），不能再调用工具。请根据已有结果直接给出最终回答，并说明因达到工具调用上限而停止。"
    )
}

/// The answer when the model says nothing after the limit (for the owner: `general.locale`).
fn limit_fallback(locale: Locale) -> String {
    match locale {
        Locale::Zh => format!("已达到本条消息的工具调用上限（{MAX_TOOL_CALLS} 次），已停止。"),
        Locale::En => {
            format!("Stopped: this message reached its limit of {MAX_TOOL_CALLS} tool calls.")
        }
    }
}

/// A tool call of the current step, owned.
#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: String,
    input: Value,
}

/// Why a turn stopped before a final answer.
#[derive(Debug)]
enum Stop {
    Cancelled,
    /// A redacted English message and its reason for the owner's client.
    Failed(String, FailReason),
    /// The request's idempotency keys were taken as the user message was stored: a concurrent
    /// request carried them; this turn has no outcome.
    AlreadyTaken(KeysTaken),
}

/// Everything a turn starts with.
pub(super) struct TurnSetup {
    pub turns: Turns,
    pub permit: Permit,
    pub events: UnboundedSender<TurnEvent>,
    pub cancel: CancellationToken,
    pub session_id: i64,
    /// The provider, model and wire kind this turn calls.
    pub model: CurrentModel,
    pub input: Accepted,
    /// Set for an owner turn: its outcome goes to the outbox, its progress to subscribers.
    pub delivery: Option<OwnerDelivery>,
    /// Stored with the user message.
    pub keys: IntakeKeys,
}

pub(super) struct Turn {
    turns: Turns,
    /// Held until just before the last event, so a follow-up `Chat` is never refused as busy.
    permit: Option<Permit>,
    events: UnboundedSender<TurnEvent>,
    listener_gone: AtomicBool,
    /// The user message is stored (an edit's restart drops it with what followed).
    user_stored: AtomicBool,
    cancel: CancellationToken,
    session_id: i64,
    id: String,
    model: CurrentModel,
    /// What the owner sent, until `receive` turns it into `user`.
    input: Option<Accepted>,
    want_voice_reply: bool,
    user: Message,
    system: Arc<str>,
    specs: Vec<ToolSpec>,
    /// The estimated tokens of `system` and `specs`, which are set once per turn.
    prefix_estimate: u64,
    /// What the model sees: full content (the store gets the slimmed form).
    messages: Vec<Message>,
    stable_prefix: usize,
    /// Index in `messages` of this turn's user message (what came before is history).
    turn_start: usize,
    /// Estimated tokens a request may hold (the window minus the output reserve, lowered by the
    /// session's calibration).
    token_budget: u64,
    /// Context-too-long retries so far (1: compacted, 2: current message only).
    shrinks: u8,
    /// Calls so far per `tool` + input, for the doom-loop guard.
    repeats: HashMap<String, usize>,
    /// What the model is told about the owner's answers to the doom-loop question (added after
    /// the step's results).
    repeat_notes: Vec<String>,
    /// The turn's answer once the owner stopped it at a repeated call (or did not answer).
    owner_stop: Option<String>,
    usage: Usage,
    calls_used: usize,
    delivery: Option<OwnerDelivery>,
    /// The idempotency keys of the owner messages, stored with the user message.
    keys: IntakeKeys,
    /// The model's final answer, stored (with its outbox item) once the turn concludes.
    final_message: Option<Message>,
    /// The model's reasoning text over every call of the turn (shown only on request).
    reasoning: String,
    /// Why the voice reply the owner wanted failed (one line, in the owner's language,
    /// redacted): shown under the text answer.
    voice_failed: Option<String>,
    /// The last call's usage, stored beside the answer when the turn concludes.
    unrecorded: Option<Usage>,
    /// Content from outside the owner entered the turn (a flagged message, a document, a job's
    /// output, an MCP result): with `approvals.mode = "untrusted"` risky calls now ask.
    outside_content: bool,
    /// Raised by a tool that took in outside content (an `ask_user` answer the owner
    /// forwarded); folded into `outside_content` after each call.
    took_outside: crate::tools::OutsideMark,
    /// What the ledger records the turn's calls as: `owner` or `task` (a turn Kernel started),
    /// `failover` once a fail-over provider serves them.
    purpose: crate::usage::Purpose,
    /// `Started` (with what the burst left out) until it is sent: an owner message's turn says
    /// it started only once the message and its idempotency keys are stored, so a crash before
    /// then leaves the message untaken (kernel-tg sends it again) rather than lost.
    unstarted: Option<Vec<String>>,
}

impl Turn {
    pub(super) fn new(s: TurnSetup) -> Self {
        let id = format!("{}-{}", s.session_id, Utc::now().timestamp_micros());
        s.permit.set_turn_id(&id);
        let purpose = match (s.model.replaces.is_some(), s.permit.origin()) {
            (true, _) => crate::usage::Purpose::Failover,
            (false, Some(Origin::Kernel)) => crate::usage::Purpose::Task,
            (false, _) => crate::usage::Purpose::Owner,
        };
        Self {
            turns: s.turns,
            permit: Some(s.permit),
            events: s.events,
            listener_gone: AtomicBool::new(false),
            user_stored: AtomicBool::new(false),
            cancel: s.cancel,
            session_id: s.session_id,
            id,
            model: s.model,
            want_voice_reply: s.input.want_voice_reply,
            outside_content: s.input.outside_content,
            took_outside: crate::tools::OutsideMark::default(),
            input: Some(s.input),
            user: Message {
                role: Role::User,
                content: Vec::new(),
            },
            system: Arc::from(""),
            specs: Vec::new(),
            prefix_estimate: 0,
            messages: Vec::new(),
            stable_prefix: 0,
            turn_start: 0,
            token_budget: u64::MAX,
            shrinks: 0,
            repeats: HashMap::new(),
            repeat_notes: Vec::new(),
            owner_stop: None,
            usage: Usage::default(),
            calls_used: 0,
            delivery: s.delivery,
            keys: s.keys,
            final_message: None,
            reasoning: String::new(),
            voice_failed: None,
            unrecorded: None,
            purpose,
            unstarted: None,
        }
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Runs the turn to its end and sends the last event; a turn an owner's edit restarts is
    /// followed by its replacement.
    pub(super) async fn run(self) {
        let mut turn = self;
        while let Some(next) = turn.run_once().await {
            turn = next;
        }
    }

    /// Runs this turn to its end (`None`), or until an edit restarts it (its replacement).
    async fn run_once(mut self) -> Option<Turn> {
        tracing::info!(provider = %self.model.name, model = %self.model.model, "turn started");
        let locale = self.turns.inner.media.locale();
        let left_out = self
            .input
            .as_ref()
            .map(|input| input.left_out.iter().map(|r| r.message(locale)).collect())
            .unwrap_or_default();
        // A voice message is transcribed before it is stored, and the owner should see that
        // happen: its turn says it started at once (a crash while transcribing is the one window
        // left, see the note on `unstarted`).
        let voice = self
            .input
            .as_ref()
            .is_some_and(|input| input.parts.iter().any(|p| matches!(p, Part::Voice(_))));
        if self.keys.as_slice().is_empty() || voice {
            self.emit_started(left_out);
        } else {
            self.unstarted = Some(left_out);
        }
        let live = &self.turns.inner.live;
        if self.delivery.is_some() || !self.keys.is_empty() {
            live.begin(&self.id, self.session_id, self.keys.as_slice());
        }
        let outcome = self.drive().await;
        let restart = self.turns.inner.live.end(&self.id);
        if let (Err(Stop::Cancelled), Some(text)) = (&outcome, restart) {
            return self.restart(text).await;
        }
        if let Some(left_out) = self.unstarted.take()
            && !matches!(outcome, Err(Stop::AlreadyTaken(_)))
        {
            // Stopped before the message was stored (a failure or a cancel): the stop is still
            // reported after `Started`, as clients expect.
            self.emit_started(left_out);
        }
        let voice_reply = match &outcome {
            Ok(text) if self.want_voice_reply => match self.voice_reply(text).await {
                Ok(audio) => audio,
                Err(why) => {
                    self.voice_failed = Some(self.turns.inner.redactor.redact(&why));
                    None
                }
            },
            _ => None,
        };
        let usage = self.unrecorded.take().map(|u| self.record_usage(u));
        let (outcome, ()) = tokio::join!(self.conclude(outcome, voice_reply.as_deref()), async {
            if let Some(write) = usage {
                write.await;
            }
        });
        self.requeue_late_steers().await;
        // The turn's spend is in the ledger: a warning now due reaches the owner after it.
        let thread_id = self.delivery.as_ref().and_then(|d| d.thread_id);
        self.turns.warn_budget(thread_id).await;
        self.finish(outcome, voice_reply);
        None
    }

    /// Sends `Started` (and, when a fail-over provider stands in for a cooling one, `FailedOver`).
    fn emit_started(&self, left_out: Vec<String>) {
        self.emit(TurnEvent::Started {
            session_id: self.session_id,
            turn_id: self.id.clone(),
            left_out,
        });
        if let Some(from) = self.model.replaces.clone() {
            self.emit(TurnEvent::FailedOver {
                from,
                to: self.model.name.clone(),
                model: self.model.model.clone(),
                reason: FailoverReason::Cooldown,
            });
        }
    }

    fn emit(&self, event: TurnEvent) {
        self.publish(&event);
        if self.events.send(event).is_err() && !self.listener_gone.swap(true, Ordering::Relaxed) {
            if self.delivery.is_some() {
                // kernel-tg follows owner turns on its subscription, not on `Chat`.
                tracing::debug!("the Chat stream closed; the owner turn goes on");
            } else {
                tracing::info!("the client went away; the turn continues without it");
            }
        }
    }

    fn finish(&mut self, outcome: Result<String, Stop>, voice_reply: Option<Vec<u8>>) {
        let turns = &self.turns.inner;
        let outcome = outcome.map_err(|stop| match stop {
            Stop::Failed(message, reason) => Stop::Failed(
                turns.redactor.redact(&message),
                reason.redacted(&turns.redactor),
            ),
            other => other,
        });
        match &outcome {
            Ok(_) => {
                tracing::info!(tool_calls = self.calls_used, usage = ?self.usage, "turn completed")
            }
            Err(Stop::Cancelled) => tracing::info!(tool_calls = self.calls_used, "turn cancelled"),
            Err(Stop::Failed(message, _)) => {
                tracing::warn!(error = %message, "turn failed");
                turns.gate.record_error(message);
            }
            Err(Stop::AlreadyTaken(taken)) => {
                tracing::info!(turn = %taken.turn_id, "turn ended: its messages were taken by another")
            }
        }
        drop(self.permit.take());
        match outcome {
            Ok(text) => {
                let reasoning = std::mem::take(&mut self.reasoning);
                self.emit(TurnEvent::Completed {
                    text,
                    usage: self.usage,
                    voice_reply,
                    reasoning,
                });
                turns.titler.after_round(self.session_id);
                turns.after_round.notify();
            }
            Err(Stop::Failed(message, reason)) => self.emit(TurnEvent::Failed { message, reason }),
            Err(Stop::Cancelled) => self.emit(TurnEvent::Cancelled),
            Err(Stop::AlreadyTaken(KeysTaken { keys, turn_id })) => {
                self.emit(TurnEvent::AlreadyTaken { keys, turn_id });
            }
        }
    }

    /// Receives the owner's message, builds the request, then runs model steps and their tool
    /// calls until a final answer (or a stop).
    async fn drive(&mut self) -> Result<String, Stop> {
        self.receive().await?;
        self.prepare().await?;
        let mut first_step = true;
        loop {
            if !std::mem::take(&mut first_step)
                && let Some((message, reason)) = self.turns.over_budget_mid_turn().await
            {
                return Err(Stop::Failed(message, reason));
            }
            let tools_allowed = self.calls_used < MAX_TOOL_CALLS;
            let response = self.model_step(tools_allowed).await?;
            self.usage += response.usage;
            self.account(&response.usage);
            let call_usage = response.usage;
            let message = response.message;
            self.note_reasoning(&message);
            let calls: Vec<Call> = message
                .tool_calls()
                .map(|c| Call {
                    id: c.id.to_owned(),
                    name: c.name.to_owned(),
                    input: c.input.clone(),
                })
                .collect();
            if calls.is_empty()
                && tools_allowed
                && let Some(steer) = self.steer_block()
            {
                // The owner steered while the answer streamed: it becomes a step of its own.
                self.steer_as_step(message, steer, call_usage).await?;
                continue;
            }
            if calls.is_empty() {
                // Stored by `conclude`, with the outbox item of an owner turn.
                let text = message.text();
                self.final_message = Some(message);
                self.unrecorded = Some(call_usage);
                return Ok(text);
            }
            let ((), stored) =
                tokio::join!(self.record_usage(call_usage), self.persist(&message, &[]));
            stored?;
            self.messages.push(message.clone());
            if !tools_allowed {
                return self.calls_over_the_limit(&calls, &message).await;
            }
            self.run_tools(calls).await?;
            self.stable_prefix = self.messages.len();
            if let Some(text) = self.owner_stop.take() {
                // The owner stopped a repeating call: the sentence is the answer.
                self.final_message = Some(Message::assistant_text(text.clone()));
                return Ok(text);
            }
            if self.calls_used >= MAX_TOOL_CALLS
                && let Some(last) = self.messages.last_mut()
            {
                last.content.push(Block::text(limit_note()));
            }
        }
    }

    /// Adds the reasoning text of a model `message` to the turn's.
    fn note_reasoning(&mut self, message: &Message) {
        let thought = crate::llm::reasoning_text(message);
        if thought.trim().is_empty() {
            return;
        }
        if !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
        }
        self.reasoning.push_str(thought.trim());
    }

    /// Stores the answer `message` and then the owner's `steer` as the next user message, so the
    /// next step answers the steer.
    async fn steer_as_step(
        &mut self,
        message: Message,
        steer: Block,
        usage: Usage,
    ) -> Result<(), Stop> {
        let ((), stored) = tokio::join!(self.record_usage(usage), self.persist(&message, &[]));
        stored?;
        self.messages.push(message);
        let steer = Message {
            role: Role::User,
            content: vec![steer],
        };
        self.persist(&steer, &[]).await?;
        self.messages.push(steer);
        Ok(())
    }

    /// The model asked for tools after the limit: the calls get the limit's result, and the
    /// `message`'s text (or a fallback saying why it stopped) is the answer.
    async fn calls_over_the_limit(
        &mut self,
        calls: &[Call],
        message: &Message,
    ) -> Result<String, Stop> {
        tracing::warn!(
            calls = calls.len(),
            "the model asked for tools after the limit"
        );
        self.close_calls(calls, vec![None; calls.len()], limit_output, None)
            .await?;
        let text = message.text();
        Ok(if text.trim().is_empty() {
            limit_fallback(self.turns.inner.media.locale())
        } else {
            text
        })
    }

    pub(super) fn with_permit(&self, f: impl FnOnce(&Permit)) {
        if let Some(p) = &self.permit {
            f(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_texts_give_the_real_cap_and_the_owner_sees_the_owners_language() {
        let cap = format!("{MAX_TOOL_CALLS}");
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let zh = limit_fallback(Locale::Zh);
        let en = limit_fallback(Locale::En);
        assert!(zh.contains(&cap) && cjk(&zh), "{zh}");
        assert!(en.contains(&cap) && !cjk(&en), "{en}");
        assert!(limit_note().contains(&cap));
        assert!(super::super::context::tool_rules().contains(&format!("最多 {cap} 次")));
    }
}
