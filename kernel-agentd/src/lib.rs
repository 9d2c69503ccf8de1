//! kernel-agentd as a library: `run(config, listeners, shutdown)` serves the gRPC API.
#![forbid(unsafe_code)]

pub mod conversation;
pub mod error;
pub mod listen;
pub mod llm;
pub mod store;
