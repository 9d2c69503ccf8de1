//! `kernel-tg [--config PATH] [--check]`: load config, start logging, run the adapter until
//! SIGINT/SIGTERM.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use kernel_common::Config;
use kernel_common::config::Component;
use kernel_common::startup;
use tokio_util::sync::CancellationToken;

const BINARY: &str = "kernel-tg";

fn main() -> ExitCode {
    kernel_common::heap::tune();
    // Keep the bot token out of reach of same-user processes (/proc/<pid>/environ, ptrace).
    startup::make_non_dumpable(BINARY);
    let about = "The Kernel Telegram adapter: stateless, forwards to kernel-agentd.";
    let config = match startup::load_config(BINARY, about, Component::Tg) {
        Ok(config) => config,
        Err(code) => return code,
    };
    match startup::runtime(BINARY, startup::Threads::One) {
        Ok(runtime) => runtime.block_on(run(config)),
        Err(code) => code,
    }
}

async fn run(config: Config) -> ExitCode {
    let _log = match kernel_common::logging::init_with_redactor(
        BINARY,
        &config.general.data_dir,
        config.redactor(),
    ) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("{BINARY}: cannot start logging: {e}");
            return ExitCode::FAILURE;
        }
    };
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    let shutdown = CancellationToken::new();
    // Handlers go in before anything can signal readiness.
    let signal = startup::shutdown_signal();
    let cancel = shutdown.clone();
    tokio::spawn(async move {
        signal.await;
        cancel.cancel();
    });
    let ready = || {
        println!("kernel-tg ready");
        kernel_common::notify::ready();
    };
    let result = kernel_tg::run(config, shutdown, ready).await;
    kernel_common::notify::stopping();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "kernel-tg cannot run");
            eprintln!("{BINARY}: {e}");
            ExitCode::FAILURE
        }
    }
}
