//! The measured processes: release `kernel-agentd` / `kernel-tg` started from a binary dir,
//! exec → ready timing from their stdout, VmRSS from /proc, SIGTERM on stop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// Lines of output kept for error reports.
const KEEP_LINES: usize = 200;

/// A running binary; killed on drop.
pub(crate) struct Proc {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    /// Spawn → the ready line.
    pub ready_after: Duration,
}

impl Proc {
    /// Spawns `<bins>/<name> --config <config>` (RUST_LOG unset: the default INFO) and waits
    /// until a line containing `ready` appears on its output.
    pub(crate) async fn start(
        bins: &Path,
        name: &str,
        config: &Path,
        ready: &str,
    ) -> anyhow::Result<Proc> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let mut child = Command::new(bins.join(name))
            .arg("--config")
            .arg(config)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawn {}", bins.join(name).display()))?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let streams: [Box<dyn std::io::Read + Send>; 2] = [
            Box::new(child.stdout.take().context("stdout")?),
            Box::new(child.stderr.take().context("stderr")?),
        ];
        for stream in streams {
            let (lines, tx, ready) = (lines.clone(), tx.clone(), ready.to_owned());
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if line.contains(&ready) {
                        let _ = tx.send(Some(Instant::now()));
                    }
                    let mut kept = lines.lock().unwrap_or_else(|p| p.into_inner());
                    if kept.len() >= KEEP_LINES {
                        kept.remove(0);
                    }
                    kept.push(line);
                }
                let _ = tx.send(None);
            });
        }
        drop(tx);
        let mut proc = Proc {
            child,
            lines,
            ready_after: Duration::ZERO,
        };
        for _ in 0..2 {
            match tokio::time::timeout(Duration::from_secs(60), rx.recv()).await {
                Ok(Some(Some(at))) => {
                    proc.ready_after = at - start;
                    return Ok(proc);
                }
                Ok(Some(None)) => continue,
                _ => break,
            }
        }
        bail!("{name} did not become ready:\n{}", proc.output())
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident set size now, in KiB.
    pub(crate) fn rss_kib(&self) -> anyhow::Result<u64> {
        rss_kib(self.pid())
    }

    /// The private (anonymous) part of its resident set now, in KiB.
    pub(crate) fn anon_kib(&self) -> anyhow::Result<u64> {
        anon_kib(self.pid())
    }

    /// The last lines it printed.
    pub(crate) fn output(&self) -> String {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// SIGTERM, then waits for it to exit.
    pub(crate) fn stop(mut self) -> anyhow::Result<()> {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .context("run kill")?;
        self.child.wait().context("wait for the process")?;
        Ok(())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `VmRSS` of `pid` in KiB.
pub(crate) fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_kib(pid, "VmRSS")
}

/// `RssAnon` of `pid` in KiB: the private part of its resident set (heap, stacks, relocated
/// data), without the clean, shareable pages of the binary and libraries.
pub(crate) fn anon_kib(pid: u32) -> anyhow::Result<u64> {
    status_kib(pid, "RssAnon")
}

/// The `key:` line of `/proc/<pid>/status`, in KiB.
fn status_kib(pid: u32, key: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {key} line"))
}

/// The directory of the binaries: `$KERNEL_BENCH_BIN_DIR`, else the one this program is in
/// (`target/release`).
pub(crate) fn bin_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("KERNEL_BENCH_BIN_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().context("current exe")?;
    let dir = exe.parent().context("exe dir")?.to_path_buf();
    for name in ["kernel-agentd", "kernel-tg"] {
        if !dir.join(name).exists() {
            bail!(
                "{} is missing: cargo build --release --bins",
                dir.join(name).display()
            );
        }
    }
    Ok(dir)
}
