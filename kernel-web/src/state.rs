//! `Web`: what every handler gets — the agentd handle and the owner's texts.

use kernel_common::agentd_client::Agentd;

use crate::texts::Texts;

/// The console's shared state (cheap to clone; kernel-web keeps nothing else).
#[derive(Clone, Debug)]
pub(crate) struct Web {
    pub(crate) agentd: Agentd,
    pub(crate) texts: Texts,
    /// Served over HTTPS: the session cookie is `Secure`.
    pub(crate) secure: bool,
}
