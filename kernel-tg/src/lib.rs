//! kernel-tg as a library: the stateless Telegram adapter. [`app::run`] is the whole program;
//! `main` only loads config, starts logging and handles signals.
#![forbid(unsafe_code)]

pub mod agentd;
pub mod answer;
pub mod app;
pub mod bundle;
pub mod buttons;
pub mod callback;
pub mod command;
pub mod delivery;
pub mod gate;
pub mod handle;
pub mod incoming;
pub mod intake;
pub mod memory_page;
pub mod telegram;
pub mod texts;
pub mod turn;

pub use app::{RunError, run};
