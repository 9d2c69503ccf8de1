//! `kernel-tg [--config PATH] [--check]`: load config, reach kernel-agentd, run the adapter.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use kernel_common::Config;
use kernel_common::config::Component;
use kernel_common::startup;
use kernel_proto::v1::GetStatusRequest;

const BINARY: &str = "kernel-tg";

fn main() -> ExitCode {
    let about = "The Kernel Telegram adapter: stateless, forwards to kernel-agentd.";
    let config = match startup::load_config(BINARY, about, Component::Tg) {
        Ok(config) => config,
        Err(code) => return code,
    };
    match startup::runtime(BINARY) {
        Ok(runtime) => runtime.block_on(run(config)),
        Err(code) => code,
    }
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
