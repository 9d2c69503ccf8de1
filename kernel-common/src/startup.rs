//! Start-up shared by both binaries: the `--config` / `--check` arguments and loading the config.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use crate::Config;
use crate::config::Component;

/// The arguments both binaries take.
#[derive(Debug, Parser)]
#[command(version)]
pub struct Args {
    /// Config file (default: $KERNEL_CONFIG, else ./config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Validate the config, print a redacted summary and exit.
    #[arg(long)]
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
    let path = Config::locate(args.config);
    let config = Config::load(&path, component).map_err(|e| {
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

/// A multi-threaded tokio runtime, or the exit code after saying why there is none.
pub fn runtime(binary: &'static str) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new().map_err(|e| {
        eprintln!("{binary}: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })
}
