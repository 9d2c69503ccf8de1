//! kernel-tg as a library: the stateless Telegram adapter. [`app::run`] is the whole program;
//! `main` only loads config, starts logging and handles signals.
//!
//! # Layout
//! - `intake` → `admission` → `handle`: updates taken, filtered, dispatched (commands through
//!   `command` and `command_call`, presses through `callback`, turns through `turn`).
//! - `delivery`: the outbox subscription — progress and every item, in order, acknowledged.
//! - `telegram`: every Bot API call; `agentd`: the gRPC client; `texts`: every text.
//!
//! Entry point: `run`.
#![forbid(unsafe_code)]

mod admission;
pub mod agentd;
mod app;
mod bundle;
mod buttons;
mod callback;
mod command;
mod command_call;
mod delivery;
mod edits;
mod handle;
mod incoming;
mod intake;
mod living;
mod memory_page;
mod reactions;
mod telegram;
mod texts;
mod topics;
mod turn;

pub use app::{RunError, run};
