//! Reaching kernel-agentd: the shared client (`kernel_common::agentd_client`: connection rules,
//! token, the reconnecting [`Agentd`] handle) and what kernel-tg tells the owner when agentd
//! refused a request ([`refused`]).

pub use kernel_common::agentd_client::{Agentd, Client, ConnectError, Token, is_transport_failure};

use kernel_proto::refused::Refused;

use crate::texts::Texts;

/// What to tell the owner when agentd refused a request: its refusal said in the owner's
/// language, or (a reason this build does not know, or a refusal agentd already put in the
/// owner's language, e.g. a media refusal) its message.
pub fn refused(status: &tonic::Status, texts: Texts) -> String {
    kernel_proto::refusal::of(status)
        .and_then(|r| Refused::parse(&r))
        .map(|r| texts.refused(&r))
        .unwrap_or_else(|| texts.rejected(status.message()))
}
