//! `kernel-agentd [--config PATH] [--check]`: make the process non-dumpable, load config, start
//! logging, bind, serve until a signal (systemd is told when it is ready and when it stops).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Context as _;
use kernel_common::Config;
use kernel_common::config::Component;
use kernel_common::startup;

const BINARY: &str = "kernel-agentd";

fn main() -> ExitCode {
    kernel_common::heap::tune();
    startup::make_non_dumpable(BINARY);
    let about = "The Kernel agent daemon: turn loop, tools and SQLite behind a gRPC API.";
    let config = match startup::load_config(BINARY, about, Component::Agentd) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let runtime = match startup::runtime(BINARY, startup::Threads::PerCpu) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "kernel-agentd failed");
            eprintln!("{BINARY}: {e:#}");
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
