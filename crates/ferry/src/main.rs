//! `ferry`: parse the command line, set up logging, run.

use clap::Parser;
use ferry::{Cli, Command};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("FERRY_LOG")
                .unwrap_or_else(|_| EnvFilter::new("info,tower_http=info")),
        )
        .init();
    // Companion's COMPANION_* variables, where the FERRY_* one is unset (see compat.rs).
    let (args, used) =
        ferry::compat::args_with_env(std::env::args_os().collect(), |k| std::env::var(k).ok());
    for name in used {
        tracing::warn!(variable = name, "using Companion's environment variable");
    }
    let Cli { command } = Cli::parse_from(args);
    let Command::Serve(config) = command;
    let listener = match TcpListener::bind(config.listen).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(addr = %config.listen, error = %e, "cannot listen");
            return std::process::ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().map_or(config.listen, |a| a);
    tracing::info!(data_dir = %config.data_dir.display(), "storing uploads");
    println!("ferry listening on http://{addr}/");
    match ferry::serve(&config, listener, ferry::shutdown_signal()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server failed");
            std::process::ExitCode::FAILURE
        }
    }
}
