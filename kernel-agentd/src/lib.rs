//! kernel-agentd as a library: [`run`] serves the gRPC API from a validated config on bound
//! listeners until a shutdown future resolves. `main` and the tests both call it.
#![forbid(unsafe_code)]

pub mod agent;
pub mod context;
pub mod conversation;
pub mod delegate;
pub mod error;
pub mod listen;
pub mod llm;
pub mod mcp;
pub mod media;
pub mod memory;
pub mod outbox;
pub mod repair;
pub mod retention;
pub mod rpc;
pub mod selection;
pub mod server;
pub mod sessions;
pub mod slim;
pub mod store;
pub mod titling;
pub mod tools;
pub mod turn;

pub use listen::Listeners;
pub use server::run;
