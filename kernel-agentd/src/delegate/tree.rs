//! Every process a delegation started, wherever it went. A CLI's shell tools may leave its
//! process group (`setsid`, a double fork), so killing the group is not enough: agentd makes
//! itself a child subreaper ([`become_subreaper`]: orphans of its descendants are re-parented to
//! it, not to init), and a [`Tree`] tracks, by walking `/proc`, every process that descends from
//! the CLI — through parent links, or by living in a process group or session one of them
//! created — while the delegation runs and when it is ended. Members are identified by pid and
//! start time, so a reused pid is never signalled. Members killed after they were re-parented to
//! agentd are reaped by pid (never with a wildcard wait, which would steal tokio's children).
//!
//! Linux: `/proc` and `PR_SET_CHILD_SUBREAPER`. Windows (`tree::windows`): a Job object holds
//! the CLI (started suspended, resumed once it is in the job) and everything it starts.
//! Elsewhere a tree is empty and only the process group is ended.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
pub(super) use linux::Tree;
#[cfg(windows)]
pub(super) use windows::{START_FLAGS, Tree, resume};

/// Makes agentd the child subreaper of its descendants (idempotent; a failure is logged and
/// leaves orphans to init, so only processes seen before their parent died are tracked).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        tracing::warn!(error = %e, "cannot become a child subreaper; tools that leave the CLI's process group may outlive it");
    }
}

/// Elsewhere: an empty tree (only the process group is ended).
#[cfg(not(any(target_os = "linux", windows)))]
#[derive(Debug)]
pub(super) struct Tree;

#[cfg(not(any(target_os = "linux", windows)))]
impl Tree {
    pub(super) fn new(_root: u32) -> Tree {
        Tree
    }

    pub(super) fn scan(&mut self) {}

    #[cfg(unix)]
    pub(super) fn signal(&self, _signal: nix::sys::signal::Signal) -> bool {
        false
    }

    pub(super) fn alive(&self) -> bool {
        false
    }

    pub(super) fn present(&self) -> bool {
        false
    }

    pub(super) fn reap(&self) {}

    pub(super) fn disarm(&mut self) {}
}
