//! The reaper against real process groups: a recorded group is killed after a "crash", a group
//! whose id was taken by another program (different start time, other boot) is left alone, a
//! group whose leader is gone still goes, and records never pile up.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// A group leader (`sh`) with a background member; both sleep until killed. Returns the leader
/// and the member's pid once the member runs.
#[expect(
    clippy::zombie_processes,
    reason = "the caller waits for the returned leader"
)]
fn group(dir: &Path) -> (Child, u32) {
    let pid_file = dir.join("member.pid");
    let script = format!(
        "sleep 300 & echo $! > '{}.tmp' && mv '{0}.tmp' '{0}'; wait",
        pid_file.display()
    );
    let mut leader = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return (leader, pid);
        }
        if Instant::now() > until {
            kill_group(leader.id());
            let _ = leader.wait();
            panic!("the member did not start");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` still runs (exists and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim_start().to_owned()))
        .is_some_and(|r| !r.starts_with('Z') && !r.starts_with('X'))
}

fn gone_soon(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

fn end(mut leader: Child, member: u32) {
    kill_group(leader.id());
    let _ = leader.wait();
    assert!(gone_soon(member));
}

#[test]
fn a_recorded_group_is_killed_at_the_next_start_and_its_record_removed() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(RECORDS_DIR);
    let (mut leader, member) = group(scratch.path());
    let record = record(&dir, leader.id()).expect("recorded");
    let path = dir.join(leader.id().to_string());
    assert!(path.is_file());
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A crash: the record stays behind.
    std::mem::forget(record);

    let reaped = reap_stale(&dir);
    assert_eq!(
        reaped,
        Reaped {
            records: 1,
            killed: 1
        }
    );
    let _ = leader.wait();
    assert!(gone_soon(member), "the member survived");
    assert!(!path.exists());
    assert_eq!(reap_stale(&dir), Reaped::default(), "nothing left to do");
}

#[test]
fn a_finished_delegation_removes_its_record() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(RECORDS_DIR);
    let (leader, member) = group(scratch.path());
    let record = record(&dir, leader.id()).expect("recorded");
    drop(record);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert_eq!(reap_stale(&dir), Reaped::default());
    assert!(alive(member), "nothing was killed");
    end(leader, member);
}

#[test]
fn a_group_id_taken_by_another_program_is_left_alone() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(RECORDS_DIR);
    let (leader, member) = group(scratch.path());
    let real = process(i32::try_from(leader.id()).unwrap()).unwrap();
    let boot = boot_id().unwrap();
    let forged = [
        // The same number, started at another time: a reused pid.
        Entry {
            pgid: leader.id(),
            start: real.start.saturating_sub(1),
            boot: boot.clone(),
        },
        // Recorded during another boot.
        Entry {
            pgid: leader.id(),
            start: real.start,
            boot: "00000000-0000-0000-0000-000000000000".into(),
        },
    ];
    for entry in forged {
        write_private(&dir, &dir.join(entry.pgid.to_string()), &entry.line()).unwrap();
        assert_eq!(
            reap_stale(&dir),
            Reaped {
                records: 1,
                killed: 0
            },
            "{entry:?}"
        );
        assert!(alive(leader.id()) && alive(member), "{entry:?} was killed");
    }
    end(leader, member);
}

#[test]
fn members_of_a_group_whose_leader_is_gone_are_killed() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(RECORDS_DIR);
    let (mut leader, member) = group(scratch.path());
    let pgid = leader.id();
    std::mem::forget(record(&dir, pgid).expect("recorded"));
    // The leader exits (and is reaped); its background member keeps the group alive.
    Command::new("kill")
        .args(["-KILL", &pgid.to_string()])
        .status()
        .unwrap();
    let _ = leader.wait();
    assert!(process(i32::try_from(pgid).unwrap()).is_none());
    assert!(alive(member));

    assert_eq!(
        reap_stale(&dir),
        Reaped {
            records: 1,
            killed: 1
        }
    );
    assert!(gone_soon(member), "the orphaned member survived");
}

#[test]
fn malformed_records_are_removed_and_kill_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(RECORDS_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in [
        ("a", ""),
        ("b", "1 2 boot"),
        ("c", "x y z"),
        ("d", "5 6 b extra"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    assert_eq!(
        reap_stale(&dir),
        Reaped {
            records: 4,
            killed: 0
        }
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert_eq!(
        reap_stale(&scratch.path().join("missing")),
        Reaped::default()
    );
}
