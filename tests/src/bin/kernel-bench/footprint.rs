//! Where a process's resident memory goes: `/proc/<pid>/smaps` summed by owner (the binary's
//! code, read-only data and relocated data, shared libraries, the main heap, glibc's per-thread
//! malloc arenas, thread stacks, other anonymous mappings), plus its thread count and the size of
//! the binary file. Linux only, like the rest of the suite.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;

use crate::stats::mib;

/// A glibc per-thread arena reserves this much address space, aligned to its size
/// (`HEAP_MAX_SIZE` on 64-bit).
const ARENA_RESERVATION: u64 = 64 * 1024 * 1024;

/// Resident KiB by owner.
#[derive(Debug, Default, Clone)]
pub(crate) struct Breakdown {
    pub exe_text: u64,
    pub exe_rodata: u64,
    /// Pages of the binary written at load time (relocations, `.data`, `.bss`).
    pub exe_data: u64,
    pub libs: u64,
    pub heap: u64,
    pub arenas: u64,
    pub stacks: u64,
    pub other_anon: u64,
    pub other: u64,
    pub threads: u64,
}

impl Breakdown {
    /// Reads `/proc/<pid>/smaps` and `/proc/<pid>/status`.
    pub(crate) fn of(pid: u32) -> anyhow::Result<Breakdown> {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).context("read /proc/pid/exe")?;
        let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps"))
            .with_context(|| format!("read /proc/{pid}/smaps"))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("read /proc/{pid}/status"))?;
        let mut out = classify(&parse(&smaps), &exe.to_string_lossy());
        out.threads = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        Ok(out)
    }

    /// One line for the table's note column.
    pub(crate) fn describe(&self) -> String {
        let mut s = String::new();
        let parts = [
            ("binary code", self.exe_text),
            ("binary rodata", self.exe_rodata),
            ("binary data/relocs", self.exe_data),
            ("shared libs", self.libs),
            ("main heap", self.heap),
            ("thread arenas", self.arenas),
            ("thread stacks", self.stacks),
            ("other anon", self.other_anon),
            ("other", self.other),
        ];
        for (i, (name, kib)) in parts.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{name} {}", mib(*kib));
        }
        let _ = write!(s, "; {} threads", self.threads);
        s
    }
}

/// One mapping of `smaps`.
#[derive(Debug, Clone)]
struct Mapping {
    start: u64,
    end: u64,
    perms: String,
    path: String,
    rss: u64,
    anonymous: u64,
}

fn parse(smaps: &str) -> Vec<Mapping> {
    let mut maps: Vec<Mapping> = Vec::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        {
            let perms = fields.next().unwrap_or("").to_owned();
            let path = fields.nth(3).unwrap_or("").to_owned();
            maps.push(Mapping {
                start,
                end,
                perms,
                path,
                rss: 0,
                anonymous: 0,
            });
            continue;
        }
        let kib = || fields.clone().next().and_then(|v| v.parse::<u64>().ok());
        if let Some(m) = maps.last_mut() {
            match first {
                "Rss:" => m.rss = kib().unwrap_or(0),
                "Anonymous:" => m.anonymous = kib().unwrap_or(0),
                _ => {}
            }
        }
    }
    maps
}

fn classify(maps: &[Mapping], exe: &str) -> Breakdown {
    let mut b = Breakdown::default();
    for (i, m) in maps.iter().enumerate() {
        if m.path == exe {
            b.exe_data += m.anonymous;
            let clean = m.rss - m.anonymous.min(m.rss);
            if m.perms.contains('x') {
                b.exe_text += clean;
            } else {
                b.exe_rodata += clean;
            }
        } else if m.path.starts_with('/') {
            b.libs += m.rss;
        } else if m.path == "[heap]" {
            b.heap += m.rss;
        } else if m.path == "[stack]" {
            b.stacks += m.rss;
        } else if m.path.is_empty() && m.perms.starts_with("rw") {
            let prev = i.checked_sub(1).map(|p| &maps[p]);
            // glibc aligns each arena's heap to its reservation.
            let arena = m.start % ARENA_RESERVATION == 0;
            let stack = prev.is_some_and(|p| {
                p.end == m.start && p.perms.starts_with("---") && p.end - p.start <= 64 * 1024
            });
            if arena {
                b.arenas += m.rss;
            } else if stack {
                b.stacks += m.rss;
            } else {
                b.other_anon += m.rss;
            }
        } else {
            b.other += m.rss;
        }
    }
    b
}

/// The size of a binary file, in KiB.
pub(crate) fn file_kib(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("stat {}", path.display()))?
        .len()
        / 1024)
}
