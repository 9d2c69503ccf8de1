//! `kernel-web [--config PATH] [--check] [--login-url]`: load config, start logging, serve the
//! console on `web.listen` (HTTPS with `web.tls_cert`/`tls_key`) until SIGINT/SIGTERM; `--login-url` prints a one-time login link.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use kernel_common::config::Component;
use kernel_common::startup;
use tokio_util::sync::CancellationToken;

const BINARY: &str = "kernel-web";

/// kernel-web's arguments: the common ones and `--login-url`.
#[derive(Debug, Parser)]
#[command(
    name = BINARY,
    version,
    about = "The Kernel web console: stateless, serves HTML on loopback, forwards to kernel-agentd."
)]
struct WebArgs {
    #[command(flatten)]
    common: startup::Args,
    /// Print a one-time login link (valid 10 minutes, works once) and exit.
    #[arg(long)]
    login_url: bool,
}

fn main() -> ExitCode {
    kernel_common::heap::tune();
    startup::make_non_dumpable(BINARY);
    let args = WebArgs::parse();
    let config = match startup::load(BINARY, args.common, Component::Web) {
        Ok(config) => config,
        Err(code) => return code,
    };
    match startup::runtime(BINARY, startup::Threads::One) {
        Ok(runtime) if args.login_url => runtime.block_on(print_login_url(config)),
        Ok(runtime) => runtime.block_on(run(config)),
        Err(code) => code,
    }
}

async fn print_login_url(config: kernel_common::Config) -> ExitCode {
    match kernel_web::login_url(&config).await {
        Ok(url) => {
            println!("{url}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{BINARY}: cannot make a login link: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: kernel_common::Config) -> ExitCode {
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
    let tls = match config.web.tls.as_ref().map(kernel_web::tls::acceptor) {
        None => None,
        Some(Ok(acceptor)) => Some(acceptor),
        Some(Err(e)) => {
            tracing::error!(error = %e, "cannot use web.tls_cert / web.tls_key");
            eprintln!("{BINARY}: cannot use web.tls_cert / web.tls_key: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(config.web.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!(error = %e, listen = %config.web.listen, "cannot listen");
            eprintln!("{BINARY}: cannot listen on {}: {e}", config.web.listen);
            return ExitCode::FAILURE;
        }
    };
    let shutdown = CancellationToken::new();
    let signal = startup::shutdown_signal();
    let cancel = shutdown.clone();
    tokio::spawn(async move {
        signal.await;
        cancel.cancel();
    });
    let addr = listener
        .local_addr()
        .map_or_else(|_| config.web.listen.to_string(), |a| a.to_string());
    tracing::info!(listen = %addr, "serving the web console");
    let scheme = if tls.is_some() { "https" } else { "http" };
    println!("kernel-web ready on {scheme}://{addr}");
    kernel_common::notify::ready();
    // Start-up's freed peak (config parsing, the redaction patterns' compilation) back to the OS:
    // kernel-web idles most of its life.
    kernel_common::heap::trim();
    let result = kernel_web::run(config, listener, tls, shutdown).await;
    kernel_common::notify::stopping();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "kernel-web stopped serving");
            eprintln!("{BINARY}: {e}");
            ExitCode::FAILURE
        }
    }
}
