//! Configuration, secrets, redaction, logging and start-up (hardening, systemd readiness) shared
//! by kernel-agentd and the adapters (kernel-tg, kernel-web), and the adapters' agentd client.
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
pub mod secret;
pub mod startup;
pub mod text;

pub use config::Config;
pub use redact::Redactor;
pub use secret::Secret;
