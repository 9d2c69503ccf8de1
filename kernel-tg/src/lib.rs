//! kernel-tg as a library: the stateless Telegram adapter. For now it holds the agentd client;
//! the Telegram side lands with its own issue.
#![forbid(unsafe_code)]

pub mod agentd;
pub mod command;
pub mod render;
pub mod texts;
