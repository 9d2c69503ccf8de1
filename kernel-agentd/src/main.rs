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
        Some(command) => runtime.block_on(maintain(config, command)),
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

/// One maintenance command; prints what it did.
async fn maintain(config: Config, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Doctor { online } => {
            let report = kernel_agentd::doctor::run(&config, online).await;
            print!(
                "{}",
                kernel_agentd::doctor::render(&report, config.general.locale)
            );
            if report.failed() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Export { to } => {
            let done = kernel_agentd::transfer::export(&config, &to).await?;
            println!(
                "exported to {}: {} sessions, {} memories, {} notes, {} schedules, {} usage rows",
                to.display(),
                done.sessions,
                done.memories,
                done.notes,
                done.schedules,
                done.usage
            );
        }
        Command::Import { from, dry_run } => {
            let done = kernel_agentd::transfer::import(&config, &from, dry_run).await?;
            let verb = if done.dry_run { "would add" } else { "added" };
            println!(
                "{} ({}): {verb} {} sessions, {} memories, {} notes, {} schedules",
                from.display(),
                done.from,
                done.added.sessions,
                done.added.memories,
                done.added.notes,
                done.added.schedules
            );
            if done.dry_run {
                for memory in &done.memories {
                    println!("  + {memory}");
                }
            }
        }
        Command::Backup { to } => {
            let made = kernel_agentd::backup::create(&config, to.as_deref()).await?;
            println!(
                "{}",
                kernel_agentd::backup::describe(&made.dir, &made.manifest)
            );
            println!("backup verified (integrity_check ok, counts match)");
        }
        Command::Restore { path } => {
            let restored = kernel_agentd::backup::restore::restore(&config, &path).await?;
            println!(
                "{}",
                kernel_agentd::backup::describe(&path, &restored.manifest)
            );
            if let Some(kept) = restored.kept {
                println!("the database it replaced is kept at {}", kept.display());
            }
            println!(
                "restored; SOUL.md, skills and the masked config in the backup are not copied back"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
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
