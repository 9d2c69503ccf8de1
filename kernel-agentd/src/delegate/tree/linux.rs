//! The Linux [`Tree`]: `/proc` walks, signals by pid, reaping by pid.

use std::collections::{BTreeMap, BTreeSet};

use nix::sys::signal::Signal;

use crate::delegate::procfs::{Proc, process, processes};

/// The processes descending from one delegated CLI. Dropping an armed tree SIGKILLs what is
/// left of it (the supervising task was dropped without ending the delegation).
#[derive(Debug)]
pub(in crate::delegate) struct Tree {
    root: i32,
    /// pid → start time of every process seen descending from the root (the root included).
    members: BTreeMap<i32, u64>,
    armed: bool,
}

impl Tree {
    /// The tree of the CLI with pid `root` (just started).
    pub(in crate::delegate) fn new(root: u32) -> Tree {
        let root = i32::try_from(root).unwrap_or(0);
        let mut members = BTreeMap::new();
        if let Some(proc) = process(root) {
            members.insert(root, proc.start);
        }
        Tree {
            root,
            members,
            armed: true,
        }
    }

    /// Adds every process now descending from a member: a child of a live member, or one in a
    /// process group or session whose id is a member's pid (and that started after it).
    pub(in crate::delegate) fn scan(&mut self) {
        self.scan_in(&processes(), me());
    }

    fn scan_in(&mut self, table: &[Proc], me: i32) {
        loop {
            let live: BTreeSet<i32> = table
                .iter()
                .filter(|p| self.members.get(&p.pid) == Some(&p.start))
                .map(|p| p.pid)
                .collect();
            let related = |id: i32, start: u64| {
                self.members
                    .get(&id)
                    .is_some_and(|member_start| start >= *member_start)
            };
            let new: Vec<(i32, u64)> = table
                .iter()
                .filter(|p| p.pid != me && p.pid > 1 && !self.members.contains_key(&p.pid))
                .filter(|p| {
                    live.contains(&p.ppid) || related(p.pgid, p.start) || related(p.sid, p.start)
                })
                .map(|p| (p.pid, p.start))
                .collect();
            if new.is_empty() {
                return;
            }
            for (pid, start) in new {
                tracing::debug!(pid, "tracking a process of the delegation");
                self.members.insert(pid, start);
            }
        }
    }

    /// Sends `signal` to every member still running (not the root: its group is signalled);
    /// whether any was running.
    pub(in crate::delegate) fn signal(&self, signal: Signal) -> bool {
        let running = self.running(&processes());
        for p in &running {
            match nix::sys::signal::kill(nix::unistd::Pid::from_raw(p.pid), signal) {
                Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
                Err(e) => {
                    tracing::warn!(pid = p.pid, error = %e, "cannot signal a process of the delegation")
                }
            }
        }
        !running.is_empty()
    }

    /// Whether a member other than the root still runs (zombies do not count).
    pub(in crate::delegate) fn alive(&self) -> bool {
        !self.running(&processes()).is_empty()
    }

    /// Whether a member other than the root is still in `/proc` (zombies included).
    pub(in crate::delegate) fn present(&self) -> bool {
        processes().iter().any(|p| self.is_member(p))
    }

    /// Reaps the members that died after being re-parented to agentd (waits for exactly those
    /// pids, without blocking; the root is tokio's to reap).
    pub(in crate::delegate) fn reap(&self) {
        use nix::sys::wait::{WaitPidFlag, waitpid};
        let me = me();
        for p in processes() {
            if self.is_member(&p) && p.zombie && p.ppid == me {
                let _ = waitpid(
                    nix::unistd::Pid::from_raw(p.pid),
                    Some(WaitPidFlag::WNOHANG),
                );
            }
        }
    }

    /// The tree has been ended; dropping it does nothing.
    pub(in crate::delegate) fn disarm(&mut self) {
        self.armed = false;
    }

    /// A member other than the root (same pid and start time).
    fn is_member(&self, p: &Proc) -> bool {
        p.pid != self.root && self.members.get(&p.pid) == Some(&p.start)
    }

    fn running(&self, table: &[Proc]) -> Vec<Proc> {
        table
            .iter()
            .filter(|p| self.is_member(p) && !p.zombie)
            .copied()
            .collect()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.armed {
            self.scan();
            self.signal(Signal::SIGKILL);
        }
    }
}

/// agentd's own pid.
fn me() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delegate::procfs::proc;

    fn tree(root: i32, start: u64) -> Tree {
        Tree {
            root,
            members: [(root, start)].into(),
            armed: false,
        }
    }

    #[test]
    fn descendants_are_found_through_parents_groups_and_sessions() {
        let me = 10;
        let table = [
            proc(me, 1, me, me, 50),
            proc(100, me, 100, me, 100), // the CLI: its own group in agentd's session
            proc(101, 100, 100, me, 101), // its shell tool
            proc(102, 101, 102, 102, 102), // setsid'd by the tool
            proc(103, 102, 102, 102, 103), // a child of that
            proc(104, me, 102, 102, 104), // orphaned into agentd, still in that session
            proc(105, me, 105, 105, 105), // orphaned elsewhere and never seen: not ours
            proc(106, 1, 106, 106, 99),  // unrelated
            proc(107, me, 100, me, 20),  // in the CLI's group id but older than it: not ours
        ];
        let mut t = tree(100, 100);
        t.scan_in(&table, me);
        let members: Vec<i32> = t.members.keys().copied().collect();
        assert_eq!(members, [100, 101, 102, 103, 104]);
        let running: Vec<i32> = t.running(&table).iter().map(|p| p.pid).collect();
        assert_eq!(
            running,
            [101, 102, 103, 104],
            "the root is left to its group"
        );
    }

    #[test]
    fn members_seen_before_their_parent_died_stay_members_and_reused_pids_do_not() {
        let me = 10;
        let mut t = tree(100, 100);
        t.scan_in(
            &[proc(100, me, 100, me, 100), proc(101, 100, 101, 101, 101)],
            me,
        );
        // The CLI exited; its setsid'd child was re-parented to agentd and started another.
        let later = [proc(101, me, 101, 101, 101), proc(200, 101, 101, 101, 300)];
        t.scan_in(&later, me);
        assert_eq!(t.running(&later).len(), 2);
        // pid 101 reused by an unrelated process: not signalled.
        let reused = [proc(101, 1, 101, 101, 5000)];
        assert!(t.running(&reused).is_empty());
    }

    #[test]
    fn a_real_setsid_grandchild_is_tracked_and_killed() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 1000 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let escaped: i32 = line.trim().parse().unwrap();
        let mut t = Tree::new(child.id());
        t.armed = true;
        t.scan();
        assert!(t.members.contains_key(&escaped), "{:?}", t.members);
        assert!(t.alive());
        drop(t);
        // The shell waits for its job: it exits once the setsid'd sleep has been killed.
        let status = child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        assert!(
            process(escaped).is_none_or(|p| p.zombie),
            "the setsid child survived"
        );
    }
}
