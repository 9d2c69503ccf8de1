//! `/proc` reading shared by the delegation's process tracking (`tree`) and the crash reaper
//! (`reaper`): one process's stat line, and every process visible.

/// One process of `/proc`: what tracking and reaping need of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Proc {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    pub(crate) pgid: i32,
    pub(crate) sid: i32,
    /// Start time in clock ticks since boot.
    pub(crate) start: u64,
    pub(crate) zombie: bool,
}

/// Process `pid` from `/proc/<pid>/stat`.
pub(crate) fn process(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Every process visible in `/proc`.
pub(crate) fn processes() -> Vec<Proc> {
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    listing
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(process)
        .collect()
}

/// `pid (comm) state ppid pgrp session … starttime …`: the command may hold spaces and
/// parentheses, so fields are counted from the last `)`; starttime is field 22.
pub(crate) fn parse_stat(stat: &str) -> Option<Proc> {
    let (head, rest) = stat.rsplit_once(')')?;
    let pid = head.split_whitespace().next()?.parse().ok()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        sid: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// A live process with these ids (for tests).
#[cfg(test)]
pub(crate) fn proc(pid: i32, ppid: i32, pgid: i32, sid: i32, start: u64) -> Proc {
    Proc {
        pid,
        ppid,
        pgid,
        sid,
        start,
        zombie: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_from_the_last_parenthesis() {
        let line = "4242 (a (weird) name) S 4241 4240 4239 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 \
                    987654 1000 10";
        assert_eq!(parse_stat(line), Some(proc(4242, 4241, 4240, 4239, 987654)));
        let zombie = line.replace(") S ", ") Z ");
        assert!(parse_stat(&zombie).unwrap().zombie);
        assert_eq!(parse_stat("garbage"), None);
    }
}
