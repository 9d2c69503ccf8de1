//! `kernel-agentd [--config PATH] [--check] [COMMAND]`: make the process non-dumpable, load
//! config, then either serve (start logging, bind, serve until a signal; systemd is told when it
//! is ready and when it stops) or run one maintenance command (`backup`, `restore`, `doctor`).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use kernel_common::Config;
use kernel_common::config::Component;
use kernel_common::startup;

const BINARY: &str = "kernel-agentd";

/// The command line: the shared `--config` / `--check`, and an optional command.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    args: startup::Args,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Copy the database (consistent, also while agentd runs), SOUL.md, the skills and the config
    /// with secrets masked into a new folder, and verify the copy.
    Backup {
        /// The folder to create (default: <backup.dir>/kernel-<UTC time>).
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Check the setup: one table of checks, each with its verdict and fix; exits 1 on any
    /// failure. Opens no network connection unless --online.
    Doctor {
        /// Also check each provider's key and the Bot API token over the network.
        #[arg(long)]
        online: bool,
    },
    /// Write sessions (Markdown, one file each, and sessions.json), memories, daily notes,
    /// schedules and usage (JSON) into a new folder (kernel-agentd must be stopped).
    Export {
        /// The folder to create.
        #[arg(long)]
        to: PathBuf,
    },
    /// Read a Kernel export, or OpenClaw / nanobot / Hermes Agent memory files, in one
    /// transaction; what is already there is skipped (kernel-agentd must be stopped).
    Import {
        /// The folder to read.
        #[arg(long)]
        from: PathBuf,
        /// Only show what would be added.
        #[arg(long)]
        dry_run: bool,
    },
    /// Put a backup's database back (kernel-agentd must be stopped; the current one is kept).
    Restore {
        /// The backup folder.
        path: PathBuf,
    },
}

fn main() -> ExitCode {
    kernel_common::heap::tune();
    startup::make_non_dumpable(BINARY);
    let about = "The Kernel agent daemon: turn loop, tools and SQLite behind a gRPC API.";
    let matches = Cli::command().name(BINARY).about(about).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let config = match startup::load(BINARY, cli.args, Component::Agentd) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let runtime = match startup::runtime(BINARY, startup::Threads::PerCpu) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let result = match cli.command {
        None => runtime.block_on(serve(config)).map(|()| ExitCode::SUCCESS),
        Some(command) => Ok(runtime.block_on(maintain(config, command))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "kernel-agentd failed");
            eprintln!("{BINARY}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// One maintenance command; prints what it did, or why it failed, in the owner's locale.
async fn maintain(config: Config, command: Command) -> ExitCode {
    use kernel_agentd::{backup, transfer};
    let locale = config.general.locale;
    let said = match command {
        Command::Doctor { online } => {
            let report = kernel_agentd::doctor::run(&config, online).await;
            print!("{}", kernel_agentd::doctor::render(&report, locale));
            if report.failed() {
                return ExitCode::FAILURE;
            }
            return ExitCode::SUCCESS;
        }
        Command::Export { to } => {
            let done = transfer::export(&config, &to).await;
            done.map(|done| transfer::texts::exported(locale, &to, &done))
                .map_err(|e| transfer::texts::error(locale, &e))
        }
        Command::Import { from, dry_run } => {
            let done = transfer::import(&config, &from, dry_run).await;
            done.map(|done| transfer::texts::imported(locale, &from, &done))
                .map_err(|e| transfer::texts::error(locale, &e))
        }
        Command::Backup { to } => {
            let made = backup::create(&config, to.as_deref()).await;
            made.map(|made| backup::texts::made(locale, &made))
                .map_err(|e| backup::texts::error(locale, &e))
        }
        Command::Restore { path } => {
            let restored = backup::restore::restore(&config, &path).await;
            restored
                .map(|restored| backup::texts::restored(locale, &path, &restored))
                .map_err(|e| backup::texts::error(locale, &e))
        }
    };
    match said {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(text) => {
            eprintln!("{BINARY}: {text}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(mut config: Config) -> anyhow::Result<()> {
    let _lock = kernel_agentd::listen::lock_data_dir(&config.general.data_dir)?;
    // Before logging starts, so that the redactor knows a generated token.
    let tcp = config.agentd.listen.is_some();
    let generated = kernel_agentd::listen::token::ensure(&mut config, tcp)?;
    let _log = kernel_common::logging::init_with_redactor(
        "kernel-agentd",
        &config.general.data_dir,
        config.redactor(),
    )
    .context("cannot start logging")?;
    for warning in &config.warnings {
        tracing::warn!(%warning, "config");
    }
    if let Some(generated) = generated {
        generated.log();
    }
    // Handlers go in before anything can signal readiness.
    let signal = startup::shutdown_signal();
    let listeners = kernel_agentd::listen::bind(&config).await?;
    let shutdown = async {
        signal.await;
        kernel_common::notify::stopping();
    };
    kernel_agentd::run(config, listeners, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        let matches = Cli::command()
            .name(BINARY)
            .try_get_matches_from(args)
            .unwrap();
        Cli::from_arg_matches(&matches).unwrap()
    }

    #[test]
    fn config_and_check_are_accepted_before_or_after_the_subcommand() {
        for args in [
            &[
                "kernel-agentd",
                "--config",
                "x.toml",
                "import",
                "--from",
                "y",
            ][..],
            &[
                "kernel-agentd",
                "import",
                "--config",
                "x.toml",
                "--from",
                "y",
            ],
            &[
                "kernel-agentd",
                "import",
                "--from",
                "y",
                "--config",
                "x.toml",
            ],
        ] {
            let cli = parse(args);
            assert_eq!(cli.args.config, Some(PathBuf::from("x.toml")), "{args:?}");
            assert!(
                matches!(cli.command, Some(Command::Import { ref from, .. }) if from == &PathBuf::from("y")),
                "{args:?}"
            );
        }
        let cli = parse(&["kernel-agentd", "doctor", "--check", "--config", "c.toml"]);
        assert!(cli.args.check);
        assert_eq!(cli.args.config, Some(PathBuf::from("c.toml")));
        let cli = parse(&["kernel-agentd", "backup", "--config", "c.toml"]);
        assert_eq!(cli.args.config, Some(PathBuf::from("c.toml")));
    }
}
