//! Generated types and service stubs for the `kernel.v1` gRPC API (see `proto/`).
//!
//! Only the `rpc` edges of kernel-agentd and kernel-tg use these types; the domain has its own.
#![forbid(unsafe_code)]
#![allow(missing_docs, clippy::all, clippy::pedantic)]

/// `kernel.v1`: the agent service.
pub mod v1 {
    tonic::include_proto!("kernel.v1");
}

/// Encoded `FileDescriptorSet` of the API, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/kernel_descriptor.bin"));
