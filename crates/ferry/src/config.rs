//! Command line and environment: every option has a flag, a `FERRY_*` variable and a default
//! shown in `--help`. Flags win over the environment.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Where `make` puts the built demo page; the default for `--ui-dir`.
const BUILT_UI_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../apps/demo/dist");

#[derive(Debug, Parser)]
#[command(
    name = "ferry",
    version,
    about = "Ferry: resumable file uploads (companion + tus endpoint)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the upload page, the tus endpoint at /files/ and the companion routes.
    Serve(ServeConfig),
}

/// Options of `ferry serve`.
#[derive(Clone, Debug, Args)]
pub struct ServeConfig {
    /// Address to listen on.
    #[arg(long, env = "FERRY_LISTEN", default_value = "127.0.0.1:3020")]
    pub listen: SocketAddr,

    /// Directory where uploads are stored (created if missing).
    #[arg(long, env = "FERRY_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Directory of the built web page served at `/` [default: the repository's apps/demo/dist].
    #[arg(long, env = "FERRY_UI_DIR")]
    pub ui_dir: Option<PathBuf>,

    /// Largest upload accepted, in bytes (no limit when unset).
    #[arg(long, env = "FERRY_MAX_SIZE")]
    pub max_size: Option<u64>,
}

impl ServeConfig {
    pub fn ui_dir(&self) -> PathBuf {
        self.ui_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(BUILT_UI_DIR))
    }
}
