//! Configuration, secrets, redaction and logging shared by kernel-agentd and kernel-tg.
#![forbid(unsafe_code)]

pub mod config;
pub mod logging;
pub mod redact;
pub mod secret;
pub mod startup;

pub use config::Config;
pub use redact::Redactor;
pub use secret::Secret;
