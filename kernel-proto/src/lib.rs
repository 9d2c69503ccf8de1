//! Generated types and service stubs for the `kernel.v1` gRPC API (see `proto/`).
//!
//! Only the `rpc` edges of kernel-agentd and kernel-tg use these types; the domain has its own.
//!
//! # Layout
//! - `v1`: the generated messages and the `Agent` service stubs (client and server).
//! - `words`: every word the processes match as a string on the wire, one enum each.
//! - `refusal`: a typed `Refusal` carried inside a gRPC status.
//! - `refused`: each refusal kind with its arguments typed, encoded and parsed in one place.
//!
//! Entry point: the `.proto` file itself (`proto/kernel/v1/agent.proto`), compiled by `build.rs`.
#![forbid(unsafe_code)]
#![allow(missing_docs, clippy::all, clippy::pedantic)]

/// `kernel.v1`: the agent service.
pub mod v1 {
    tonic::include_proto!("kernel.v1");
}

pub mod refusal;
pub mod refused;
pub mod words;

/// The largest voice reply agentd sends (the Ogg/Opus bytes of `TurnCompleted`'s voice).
pub const MAX_VOICE_REPLY_BYTES: usize = 20 * 1024 * 1024;

/// The largest file agentd sends to the owner (`OutboxFile`): Telegram's bot upload limit.
pub const MAX_FILE_BYTES: usize = 50 * 1024 * 1024;

/// The largest message agentd sends: a file of [`MAX_FILE_BYTES`] (or a voice reply of
/// [`MAX_VOICE_REPLY_BYTES`] with the answer text, ≤ a few hundred KB) and the envelope.
/// Clients raise tonic's 4 MiB decoding limit to it.
pub const MAX_RESPONSE_BYTES: usize = MAX_FILE_BYTES + 4 * 1024 * 1024;

/// Encoded `FileDescriptorSet` of the API, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/kernel_descriptor.bin"));
