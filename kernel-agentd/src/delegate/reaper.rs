//! Delegations that outlive a crashed agentd. Killing agentd with SIGKILL does not end a
//! delegated CLI's process group; under systemd the unit's control-group kill does, without
//! systemd nothing would. So every running delegation is recorded in `data_dir/cli_groups/<pgid>`
//! — the group id, its leader's start time (`/proc/<pid>/stat`, clock ticks since boot) and the
//! boot id — and the record is removed once the whole group is gone. At start-up, [`reap_stale`]
//! SIGKILLs the groups of records a crash left behind, but only when the group is provably still
//! the one agentd started, so a number reused by an unrelated program is never signalled:
//! - same boot (start times count from boot);
//! - the leader still runs with the recorded start time; or, the leader gone, processes remain in
//!   the group that started no earlier than it. The kernel does not hand out a number still in use
//!   as a group id, so while a member of the old group lives no new group can have its id. (A new
//!   group under the same id whose leader has already exited again would need the old group to die
//!   completely, the pid space to wrap around, and that leader to exit, all between the crash and
//!   the restart.)
//!
//! Linux only (`/proc`); elsewhere nothing is recorded and nothing reaped.

use std::path::{Path, PathBuf};

use crate::delegate::procfs::{Proc, process, processes};

/// The folder under `data_dir` holding one record per running delegation.
pub const RECORDS_DIR: &str = "cli_groups";

/// A running delegation's record; the file is removed on drop (once its group has been ended).
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
}

impl Drop for Record {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot remove a delegation record");
        }
    }
}

/// What a record says about a group.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    pgid: u32,
    /// The leader's start time, in clock ticks since boot.
    start: u64,
    boot: String,
}

impl Entry {
    fn parse(text: &str) -> Option<Entry> {
        let mut words = text.split_whitespace();
        let entry = Entry {
            pgid: words.next()?.parse().ok()?,
            start: words.next()?.parse().ok()?,
            boot: words.next()?.to_owned(),
        };
        (words.next().is_none() && entry.pgid > 1).then_some(entry)
    }

    fn line(&self) -> String {
        format!("{} {} {}\n", self.pgid, self.start, self.boot)
    }
}

/// Records the process group led by `pgid` in `dir`. `None` (after a warning) when it cannot:
/// then a crash leaves the group to systemd's control-group kill alone.
pub fn record(dir: &Path, pgid: u32) -> Option<Record> {
    let (Some(leader), Some(boot)) = (i32::try_from(pgid).ok().and_then(process), boot_id()) else {
        tracing::debug!(
            pgid,
            "no /proc entry for the CLI: its group is not recorded"
        );
        return None;
    };
    let entry = Entry {
        pgid,
        start: leader.start,
        boot,
    };
    let path = dir.join(pgid.to_string());
    match write_private(dir, &path, &entry.line()) {
        Ok(()) => Some(Record { path }),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e,
                "cannot record the CLI's process group; a crash of agentd would leave it running");
            None
        }
    }
}

/// Writes `text` to `path` (0600) through a temporary file, creating `dir` (0700) if needed.
fn write_private(dir: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// What [`reap_stale`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// Records found (all of them are removed).
    pub records: usize,
    /// Groups killed: still running and still the ones agentd started.
    pub killed: usize,
}

/// Kills the process groups that the records in `dir` prove are leftovers of a previous agentd,
/// and removes every record. Call it at start-up, before any delegation runs.
pub fn reap_stale(dir: &Path) -> Reaped {
    let mut reaped = Reaped::default();
    let Ok(listing) = std::fs::read_dir(dir) else {
        return reaped;
    };
    let files: Vec<PathBuf> = listing.filter_map(Result::ok).map(|e| e.path()).collect();
    if files.is_empty() {
        return reaped;
    }
    let (procs, boot) = (processes(), boot_id());
    for path in files {
        reaped.records += 1;
        let entry = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| Entry::parse(&t));
        match entry {
            Some(entry) if is_ours(&entry, &procs, boot.as_deref()) => {
                tracing::warn!(
                    pgid = entry.pgid,
                    "a delegated CLI outlived the previous agentd; killing its process group"
                );
                if kill_group(entry.pgid) {
                    reaped.killed += 1;
                }
            }
            Some(entry) => tracing::debug!(
                pgid = entry.pgid,
                "stale delegation record: nothing of it runs"
            ),
            None => {
                tracing::warn!(path = %path.display(), "ignoring a malformed delegation record")
            }
        }
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), error = %e, "cannot remove a delegation record");
        }
    }
    reaped
}

/// Whether `entry`'s group still runs and is still the one that was recorded (see the module
/// docs).
fn is_ours(entry: &Entry, procs: &[Proc], boot: Option<&str>) -> bool {
    if boot != Some(entry.boot.as_str()) {
        return false;
    }
    let Ok(pgid) = i32::try_from(entry.pgid) else {
        return false;
    };
    match procs.iter().find(|p| p.pid == pgid) {
        Some(leader) => leader.start == entry.start && leader.pgid == pgid,
        None => procs
            .iter()
            .any(|p| p.pgid == pgid && p.start >= entry.start),
    }
}

/// SIGKILL to the whole group; whether anything was there.
#[cfg(unix)]
fn kill_group(pgid: u32) -> bool {
    let Ok(raw) = i32::try_from(pgid) else {
        return false;
    };
    let pgid = nix::unistd::Pid::from_raw(raw);
    match nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL) {
        Ok(()) => true,
        Err(nix::errno::Errno::ESRCH) => false,
        Err(e) => {
            tracing::warn!(pgid = raw, error = %e, "cannot kill a leftover CLI process group");
            false
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: u32) -> bool {
    false
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then(|| id.to_owned())
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
