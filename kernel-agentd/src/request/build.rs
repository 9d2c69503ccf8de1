//! The one entry point of request building: [`build`] turns plain inputs — the persona and the
//! skills index, the tools, the session's stored summary and rounds, the token budget, the new
//! user message, the local time and the recalled memories — into the provider-neutral request
//! (system prompt, messages, cache-stable prefix) and the fold the caller must save. No store,
//! no network, no clock: the turn gathers the inputs and calls it.

use std::sync::Arc;

use kernel_common::config::ProviderKind;

use super::context::{assemble, per_turn_block, with_skills};
use super::history::{Folded, Limits, StoredHistory, fit};
use super::session_summary::SessionSummary;
use super::tokens::{message_tokens, prefix_tokens};
use crate::conversation::{Message, ToolSpec};

/// Room left in the budget for the per-turn block (time, recalled memories) when the history is
/// fitted.
const PER_TURN_ALLOWANCE: u64 = 1_000;

/// Everything a request is built from, as plain data.
#[derive(Debug, Clone)]
pub(crate) struct RequestInputs<'a> {
    /// SOUL.md with the tool rules (`context::system_prompt`).
    pub persona: Arc<str>,
    /// The skills index, after the persona in the system prompt (empty: none).
    pub skills_index: &'a str,
    /// The tools offered to the model (they count against the budget).
    pub tools: &'a [ToolSpec],
    /// The session's summary and the stored messages after it.
    pub stored: StoredHistory,
    /// The rounds ceiling (`general.context_rounds`).
    pub rounds: usize,
    /// Estimated tokens the whole request may hold.
    pub token_budget: u64,
    /// The wire the request goes to (what the transcript repair must satisfy).
    pub kind: ProviderKind,
    /// The owner's new message.
    pub user: &'a Message,
    /// The local time as the per-turn block shows it (`context::format_now`).
    pub now: &'a str,
    /// The recalled memories, one line each, with their origin labels.
    pub memories: &'a [String],
}

/// A request ready to send, and what building it changed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BuiltRequest {
    /// The byte-stable system prompt.
    pub system: Arc<str>,
    /// The estimated tokens of the system prompt and the tools.
    pub prefix_tokens: u64,
    /// The history (summary first) and the new user message with the per-turn block.
    pub messages: Vec<Message>,
    /// Messages before the newest user message (they repeat unchanged in the next request).
    pub stable_prefix: usize,
    /// The session summary the request carries.
    pub summary: SessionSummary,
    /// Set when rounds were folded into `summary`: the caller saves it.
    pub folded: Option<Folded>,
}

/// Builds the request for `inputs`.
pub(crate) fn build(inputs: RequestInputs<'_>) -> BuiltRequest {
    let system = with_skills(inputs.persona, inputs.skills_index);
    let prefix_tokens = prefix_tokens(&system, inputs.tools);
    let limits = Limits {
        rounds: inputs.rounds,
        token_budget: inputs.token_budget,
        fixed: prefix_tokens + message_tokens(inputs.user) + PER_TURN_ALLOWANCE,
        kind: inputs.kind,
    };
    let history = fit(inputs.stored, limits);
    let (summary, folded) = (history.summary.clone(), history.folded);
    let per_turn = per_turn_block(inputs.now, inputs.memories);
    let assembled = assemble(history.with_summary(), inputs.user, &per_turn);
    BuiltRequest {
        system,
        prefix_tokens,
        messages: assembled.messages,
        stable_prefix: assembled.stable_prefix,
        summary,
        folded,
    }
}

#[cfg(test)]
mod tests;
