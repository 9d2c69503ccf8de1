//! Configuration, secrets, redaction, logging and start-up (hardening, systemd readiness) shared
//! by kernel-agentd and the adapters (kernel-tg, kernel-web), and the adapters' agentd client.
//!
//! # Layout
//! - `config`: `Config::load` (serde mirror `config::raw`, then `config::validate`).
//! - `agentd_client`: the adapters' one way to reach agentd (socket, pipe or TCP + token).
//! - `secret`, `redact`: secrets that never print, and the scrubbing of logs and errors.
//! - `logging`, `startup`, `notify`, `heap`: what every binary does on the way up.
//! - `limits`, `text`: rules both sides apply to what the owner sends and sees.
//! - `said`: the owner-facing words both adapters say (failures, refusals), zh and en.
//!
//! Entry point: `startup` (arguments, config, hardening) from each binary's `main`.
// `deny`, not `forbid`: `heap` alone allows the two glibc malloc calls it makes.
#![deny(unsafe_code)]

pub mod agentd_client;
pub mod agentd_token;
pub mod config;
pub mod heap;
pub mod limits;
pub mod logging;
pub mod notify;
#[cfg(windows)]
pub mod owner_only;
pub mod redact;
pub mod said;
pub mod secret;
pub mod startup;
pub mod text;

pub use config::Config;
pub use redact::Redactor;
pub use secret::Secret;
