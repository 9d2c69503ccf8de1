//! Running one delegation's subprocess: stdin from `/dev/null`, stdout and stderr straight into
//! the output file (so the full output streams to disk as it arrives and nothing is buffered in
//! agentd), its own process group, Kernel's secrets removed from its environment; then waiting
//! for it to exit, time out or be cancelled (tracking every process it starts meanwhile, see
//! [`Tree`]), and ending its whole process group and every descendant.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::group::{self, Group, GroupGuard};
use super::invocation::Invocation;
use super::tree::Tree;

/// How often the CLI's descendants are looked up while it runs (to know them after their parent
/// exits, when they may have left its process group).
const SCAN_EVERY: Duration = Duration::from_millis(200);

/// How a delegation's subprocess ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited by itself: its exit code, or the signal that ended it.
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// It ran past its time limit; the group was killed.
    TimedOut(Duration),
    /// The turn was cancelled; the group was killed.
    Cancelled,
}

impl Exit {
    /// The exit code, when it exited by itself with one.
    pub fn code(self) -> Option<i32> {
        match self {
            Exit::Exited { code, .. } => code,
            Exit::TimedOut(_) | Exit::Cancelled => None,
        }
    }

    /// A line for the model (and the output file) when it did not simply exit with a code.
    pub fn note(self) -> Option<String> {
        match self {
            Exit::Exited { code: Some(_), .. } => None,
            Exit::Exited { signal, .. } => Some(format!(
                "[Kernel: the CLI was ended by signal {}]",
                signal.map_or_else(|| "?".to_owned(), |s| s.to_string())
            )),
            Exit::TimedOut(limit) => Some(format!(
                "[Kernel: the CLI ran longer than its {} s time limit and was stopped (its whole \
                 process group was killed)]",
                limit.as_secs()
            )),
            Exit::Cancelled => Some(
                "[Kernel: cancelled by the owner; the CLI's whole process group was killed]"
                    .to_owned(),
            ),
        }
    }
}

/// A started subprocess, not yet supervised.
#[derive(Debug)]
pub(super) struct Started {
    child: Child,
    group: Group,
    guard: GroupGuard,
    tree: Tree,
}

/// Starts `inv` with stdout and stderr appended to `log`.
pub(super) fn start(inv: &Invocation, log: std::fs::File) -> std::io::Result<Started> {
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .current_dir(&inv.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log))
        .kill_on_drop(false);
    for name in &inv.env_remove {
        cmd.env_remove(name);
    }
    for (name, value) in &inv.env_set {
        cmd.env(name, value);
    }
    group::isolate(&mut cmd);
    let child = cmd.spawn()?;
    let group = Group::of(&child).ok_or_else(|| std::io::Error::other("the CLI has no pid"))?;
    let guard = GroupGuard::new(group);
    let tree = Tree::new(group.id());
    // Windows: created suspended; it runs only now that it is in its job. On failure the guard
    // and the job (closed on drop, "kill on job close") end it.
    #[cfg(windows)]
    super::tree::resume(group.id())?;
    Ok(Started {
        child,
        guard,
        tree,
        group,
    })
}

impl Started {
    /// The id of its process group.
    pub(super) fn pgid(&self) -> u32 {
        self.group.id()
    }

    /// Waits until the subprocess exits, `limit` passes or `cancel` fires (then its group and
    /// every descendant are ended: TERM, KILL after `grace`), looking its descendants up every
    /// [`SCAN_EVERY`]. Sends how it ended on `done` as soon as the leader is gone, then ends
    /// whatever else it left running before returning.
    pub(super) async fn supervise(
        mut self,
        limit: Duration,
        grace: Duration,
        cancel: CancellationToken,
        done: oneshot::Sender<Exit>,
    ) {
        let timeout = tokio::time::sleep(limit);
        tokio::pin!(timeout);
        let mut scan = tokio::time::interval(SCAN_EVERY);
        scan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let exit = loop {
            tokio::select! {
                status = self.child.wait() => break exited(status),
                () = &mut timeout => {
                    tracing::warn!(limit_s = limit.as_secs(), "the CLI timed out; killing its processes");
                    self.group.terminate(&mut self.child, &mut self.tree, grace).await;
                    break Exit::TimedOut(limit);
                }
                () = cancel.cancelled() => {
                    tracing::info!("delegation cancelled; killing the CLI's processes");
                    self.group.terminate(&mut self.child, &mut self.tree, grace).await;
                    break Exit::Cancelled;
                }
                _ = scan.tick() => self.tree.scan(),
            }
        };
        let _ = done.send(exit);
        // Whatever the CLI left running (background jobs, tools in sessions of their own) ends
        // with it.
        self.group
            .terminate(&mut self.child, &mut self.tree, grace)
            .await;
        self.guard.disarm();
        self.tree.disarm();
    }
}

fn exited(status: std::io::Result<std::process::ExitStatus>) -> Exit {
    match status {
        Ok(status) => Exit::Exited {
            code: status.code(),
            signal: signal_of(status),
        },
        Err(e) => {
            tracing::warn!(error = %e, "cannot wait for the CLI");
            Exit::Exited {
                code: None,
                signal: None,
            }
        }
    }
}

#[cfg(unix)]
fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal_of(_: std::process::ExitStatus) -> Option<i32> {
    None
}
