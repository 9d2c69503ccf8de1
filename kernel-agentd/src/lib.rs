//! kernel-agentd as a library: [`run`] serves the gRPC API from a validated config on bound
//! listeners until a shutdown future resolves. `main` and the tests both call it.
//!
//! # Layout
//! - `rpc`, `server`, `listen`: the gRPC edge — the only place proto types are seen.
//! - `agent`: the composition root that builds every service; nothing else imports it.
//! - `turn` (with `request`, `llm`, `tools`, `models`): one owner message through the model.
//! - `outbox`, `store`: what the owner is owed, and SQLite behind it.
//! - the other services, one module each: `memory`, `schedule`, `delegate`, `mcp`, `budget`, …
//! - `doctor`, `backup`, `transfer`: the maintenance commands of `main`.
//!
//! Entry point: `run` (`server::run`).
#![deny(unsafe_code)]

pub(crate) mod agent;
pub(crate) mod approvals;
pub(crate) mod ask;
pub mod backup;
pub(crate) mod bridge;
pub mod budget;
pub(crate) mod consolidation;
pub mod conversation;
pub mod delegate;
pub mod doctor;
pub(crate) mod error;
pub(crate) mod failure;
pub mod http;
pub(crate) mod jobs;
pub mod listen;
pub(crate) mod listing;
pub mod llm;
pub mod mcp;
pub(crate) mod media;
pub mod memory;
pub(crate) mod memory_auto;
pub(crate) mod models;
pub(crate) mod outbox;
pub mod prices;
pub(crate) mod program;
pub(crate) mod quiet;
pub mod recall;
pub(crate) mod refusal;
pub(crate) mod request;
pub mod retention;
pub(crate) mod rpc;
pub(crate) mod schedule;
pub(crate) mod send_file;
pub mod server;
pub(crate) mod sessions;
pub(crate) mod skills;
pub mod store;
pub(crate) mod summary_rewrite;
#[cfg(test)]
mod test_support;
pub(crate) mod titling;
pub mod tools;
pub mod transfer;
pub mod turn;
pub(crate) mod usage;
pub(crate) mod web_auth;

pub use listen::Listeners;
pub use server::run;
