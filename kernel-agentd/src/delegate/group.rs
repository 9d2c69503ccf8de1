//! The delegated CLI's process group: started as its own group, and ended as a whole with every
//! process that left it ([`Tree`]) — TERM to all of them, KILL to whatever is left after a grace
//! period, the leader and re-parented members reaped (no zombie of ours). Windows has no process
//! groups: there the delegation's Job object is ended ([`Tree`]), or, when the CLI could not be
//! put in one, its process tree with `taskkill /T /F`.

use std::time::Duration;

use tokio::process::{Child, Command};

use super::tree::Tree;

/// How often the group is checked while it winds down after TERM.
#[cfg(unix)]
const POLL: Duration = Duration::from_millis(20);
/// How long killed members re-parented to agentd are waited for, to reap them.
#[cfg(unix)]
const REAP_WAIT: Duration = Duration::from_secs(2);

/// Makes the child the leader of a new process group (unix), or of a new console process group
/// (Windows), so signals for the group never reach agentd. On Windows it is also created
/// suspended (`tree::START_FLAGS`): `tree::resume` lets it run once it is in its Job object.
pub(super) fn isolate(cmd: &mut Command) {
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    {
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        // One call: `creation_flags` replaces the flags given before.
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | super::tree::START_FLAGS);
    }
}

/// A started group: its id is the leader's pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Group {
    pid: u32,
}

impl Group {
    pub(super) fn of(child: &Child) -> Option<Group> {
        child.id().map(|pid| Group { pid })
    }

    /// The group id (the leader's pid).
    pub(super) fn id(self) -> u32 {
        self.pid
    }

    /// Ends every process of the group and of `tree`: TERM, then KILL for what is still there
    /// after `grace`; the leader is reaped, and so are members re-parented to agentd. Returns at
    /// once when nothing of either is left.
    #[cfg(unix)]
    pub(super) async fn terminate(self, leader: &mut Child, tree: &mut Tree, grace: Duration) {
        use nix::sys::signal::Signal;
        tree.scan();
        let group_there = self.signal(Some(Signal::SIGTERM));
        if !(tree.signal(Signal::SIGTERM) || group_there) {
            let _ = leader.wait().await;
            tree.reap();
            return;
        }
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            // Reap the leader as soon as it exits: a zombie leader keeps the group alive.
            let _ = leader.try_wait();
            tree.reap();
            tree.scan();
            if !self.signal(None) && !tree.alive() {
                Self::reap_members(tree).await;
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        tracing::info!(
            pgid = self.pid,
            "the CLI's processes outlived TERM; killing them"
        );
        tree.scan();
        self.signal(Some(Signal::SIGKILL));
        tree.signal(Signal::SIGKILL);
        let _ = leader.wait().await;
        Self::reap_members(tree).await;
    }

    /// Reaps killed members as they die and are re-parented to agentd, for up to [`REAP_WAIT`].
    #[cfg(unix)]
    async fn reap_members(tree: &Tree) {
        let until = tokio::time::Instant::now() + REAP_WAIT;
        loop {
            tree.reap();
            if !tree.present() || tokio::time::Instant::now() >= until {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Windows: ends the job at once (console programs ignore polite requests), or the
    /// process tree when there is no job; the leader is waited for.
    #[cfg(windows)]
    pub(super) async fn terminate(self, leader: &mut Child, tree: &mut Tree, _grace: Duration) {
        if !tree.kill() {
            let _ = Command::new("taskkill")
                .args(["/PID", &self.pid.to_string(), "/T", "/F"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .await;
        }
        let _ = leader.start_kill();
        let _ = leader.wait().await;
    }

    /// Sends `signal` (`None`: only checks) to the whole group; whether any process was there.
    #[cfg(unix)]
    fn signal(self, signal: Option<nix::sys::signal::Signal>) -> bool {
        let Ok(pgid) = i32::try_from(self.pid) else {
            return false;
        };
        match nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal) {
            Ok(()) => true,
            Err(nix::errno::Errno::ESRCH) => false,
            Err(e) => {
                tracing::warn!(pgid, error = %e, "cannot signal the CLI's process group");
                false
            }
        }
    }

    /// Last resort when the supervising task is dropped without finishing (runtime shutdown):
    /// KILL the group at once, without waiting.
    pub(super) fn kill_now(self) {
        #[cfg(unix)]
        self.signal(Some(nix::sys::signal::Signal::SIGKILL));
        #[cfg(windows)]
        {
            let _ = std::process::Command::new("taskkill")
                .args(["/PID", &self.pid.to_string(), "/T", "/F"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
        }
    }
}

/// Kills the group on drop unless [`GroupGuard::disarm`]ed.
#[derive(Debug)]
pub(super) struct GroupGuard {
    group: Option<Group>,
}

impl GroupGuard {
    pub(super) fn new(group: Group) -> Self {
        Self { group: Some(group) }
    }

    /// The group has been dealt with; dropping the guard does nothing.
    pub(super) fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            group.kill_now();
        }
    }
}
