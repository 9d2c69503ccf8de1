//! `kernel-tg [--config PATH] [--check]`: load config, reach kernel-agentd, run the adapter.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kernel_common::Config;
use kernel_common::config::Component;
use kernel_proto::v1::GetStatusRequest;

/// The Kernel Telegram adapter.
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
    let config = match Config::load(&path, Component::Tg) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("kernel-tg: {}: {e}", path.display());
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
            eprintln!("kernel-tg: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(config))
}

async fn run(config: Config) -> ExitCode {
    let _log = match kernel_common::logging::init_with_redactor(
        "kernel-tg",
        &config.general.data_dir,
        config.redactor(),
    ) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("kernel-tg: cannot start logging: {e}");
            return ExitCode::FAILURE;
        }
    };
    let endpoint = &config.agentd.endpoint;
    // agentd may be starting at the same time (systemd, scripts/run): give it a few seconds.
    let mut client =
        match kernel_tg::agentd::connect_with_retry(endpoint, config.agentd.token.as_ref(), 20)
            .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "cannot reach kernel-agentd");
                eprintln!("kernel-tg: {e}");
                return ExitCode::FAILURE;
            }
        };
    match client.get_status(GetStatusRequest {}).await {
        Ok(status) => {
            let status = status.into_inner();
            tracing::info!(agentd_version = %status.version, %endpoint, "connected to kernel-agentd");
            tracing::warn!("the Telegram side of kernel-tg is not built yet; exiting");
            ExitCode::SUCCESS
        }
        Err(status) => {
            eprintln!(
                "kernel-tg: kernel-agentd at {endpoint} answered {:?}: {}",
                status.code(),
                status.message()
            );
            ExitCode::FAILURE
        }
    }
}
