//! Start-up shared by both binaries: making the process non-dumpable, the `--config` / `--check`
//! arguments and loading the config.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use crate::Config;
use crate::config::Component;

/// The arguments both binaries take.
#[derive(Debug, Clone, Parser)]
#[command(version)]
pub struct Args {
    /// Config file (default: $KERNEL_CONFIG, else ./config.toml). Global: accepted before or
    /// after a subcommand (`kernel-agentd import --config X --from Y`).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Validate the config, print a redacted summary and exit.
    #[arg(long, global = true)]
    pub check: bool,
}

/// Parses the command line of `binary` and loads its config. `Err` carries the exit code when
/// the process should stop now: the config was refused (problems printed, exit 2) or `--check`
/// was asked for (summary printed, exit 0).
pub fn load_config(
    binary: &'static str,
    about: &'static str,
    component: Component,
) -> Result<Config, ExitCode> {
    let matches = Args::command().name(binary).about(about).get_matches();
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    load(binary, args, component)
}

/// Loads the config `args` name (a binary with its own command line flattens [`Args`] into
/// it); `Err` carries the exit code as for [`load_config`].
pub fn load(binary: &'static str, args: Args, component: Component) -> Result<Config, ExitCode> {
    let path = Config::locate(args.config);
    let config = Config::load(&path, component, &|k| std::env::var(k).ok()).map_err(|e| {
        eprintln!("{binary}: {}: {e}", path.display());
        ExitCode::from(2)
    })?;
    if args.check {
        println!("{}", config.summary());
        println!("config OK");
        return Err(ExitCode::SUCCESS);
    }
    Ok(config)
}

/// How many threads a binary's runtime runs its tasks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// One: the current thread (an I/O-bound adapter; less memory, no cross-thread wake-ups).
    One,
    /// A worker per CPU, at most [`MAX_WORKERS`]: a personal daemon runs one turn at a time
    /// plus background work, and every worker thread holds its own stack and allocator cache.
    PerCpu,
}

/// The most worker threads [`Threads::PerCpu`] starts.
pub const MAX_WORKERS: usize = 2;

/// A tokio runtime, or the exit code after saying why there is none.
pub fn runtime(
    binary: &'static str,
    threads: Threads,
) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = match threads {
        Threads::One => tokio::runtime::Builder::new_current_thread(),
        Threads::PerCpu => {
            let cpus = std::thread::available_parallelism().map_or(1, usize::from);
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(cpus.clamp(1, MAX_WORKERS));
            b
        }
    };
    builder.enable_all().build().map_err(|e| {
        eprintln!("{binary}: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })
}

/// Makes this process non-dumpable (Linux `PR_SET_DUMPABLE` = 0) and says so on stderr if that
/// fails. Call it first in `main`, before any secret is read. A non-dumpable process writes no
/// core dump, and other processes of the same user — a delegated CLI included — can no longer
/// read its `/proc/<pid>/environ` or memory, nor attach to it. Its children are unaffected: they
/// become dumpable again when they `exec`. Elsewhere than on Linux this does nothing.
pub fn make_non_dumpable(binary: &'static str) {
    if let Err(e) = set_non_dumpable() {
        eprintln!("{binary}: warning: cannot make the process non-dumpable: {e}");
    }
}

#[cfg(target_os = "linux")]
fn set_non_dumpable() -> std::io::Result<()> {
    nix::sys::prctl::set_dumpable(false).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn set_non_dumpable() -> std::io::Result<()> {
    Ok(())
}

/// Whether this process may be dumped (Linux `PR_GET_DUMPABLE`); `None` elsewhere.
pub fn is_dumpable() -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::get_dumpable().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Installs the SIGTERM and SIGINT handlers *now* and returns a future that resolves on the
/// first of them. Call it before signalling readiness: a handler installed lazily, on first poll,
/// would let a SIGTERM sent right after `READY=1` kill the process with the default action,
/// skipping the graceful stop. Must be called inside a Tokio runtime.
///
/// On Windows the same holds for Ctrl+C, Ctrl+Break, closing the console, log-off and system
/// shutdown (what a service wrapper sends to stop a console program).
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    let handlers = signals::install();
    async move {
        match handlers {
            Ok(handlers) => handlers.first().await,
            Err(e) => {
                tracing::error!(error = %e, "cannot install signal handlers");
                std::future::pending::<()>().await;
            }
        }
        tracing::info!("signal received; shutting down");
    }
}

#[cfg(unix)]
mod signals {
    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub(super) struct Handlers {
        term: Signal,
        int: Signal,
    }

    pub(super) fn install() -> std::io::Result<Handlers> {
        Ok(Handlers {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    impl Handlers {
        pub(super) async fn first(mut self) {
            tokio::select! {
                _ = self.term.recv() => {}
                _ = self.int.recv() => {}
            }
        }
    }
}

#[cfg(windows)]
mod signals {
    use tokio::signal::windows::{
        CtrlBreak, CtrlC, CtrlClose, CtrlShutdown, ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown,
    };

    pub(super) struct Handlers {
        c: CtrlC,
        brk: CtrlBreak,
        close: CtrlClose,
        shutdown: CtrlShutdown,
    }

    pub(super) fn install() -> std::io::Result<Handlers> {
        Ok(Handlers {
            c: ctrl_c()?,
            brk: ctrl_break()?,
            close: ctrl_close()?,
            shutdown: ctrl_shutdown()?,
        })
    }

    impl Handlers {
        pub(super) async fn first(mut self) {
            tokio::select! {
                _ = self.c.recv() => {}
                _ = self.brk.recv() => {}
                _ = self.close.recv() => {}
                _ = self.shutdown.recv() => {}
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_process_becomes_non_dumpable() {
        make_non_dumpable("kernel-common-test");
        assert_eq!(is_dumpable(), Some(false));
    }
}
