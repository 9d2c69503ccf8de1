//! `kernel-agentd [--config PATH] [--check]`: load config, start logging, bind, serve until a signal.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use kernel_common::Config;
use kernel_common::config::Component;

/// The Kernel agent daemon.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Config file (default: $KERNEL_CONFIG, else ./config.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Validate the config, print a redacted summary and exit.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let path = Config::locate(args.config);
    let config = match Config::load(&path, Component::Agentd) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("kernel-agentd: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    if args.check {
        println!("{}", config.summary());
        println!("config OK");
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kernel-agentd: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "kernel-agentd failed");
            eprintln!("kernel-agentd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let _lock = kernel_agentd::listen::lock_data_dir(&config.general.data_dir)?;
    let _log = kernel_common::logging::init_with_redactor(
        "kernel-agentd",
        &config.general.data_dir,
        config.redactor(),
    )
    .context("cannot start logging")?;
    for warning in &config.warnings {
        tracing::warn!(%warning, "config");
    }
    let listeners = kernel_agentd::listen::bind(&config).await?;
    kernel_agentd::run(config, listeners, shutdown_signal()).await
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot install the SIGTERM handler");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
