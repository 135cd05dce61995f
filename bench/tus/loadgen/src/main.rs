//! Load generator and reference servers for `bench/tus/run.sh`.
//!
//! The Node fetch client used for the concurrent-upload measurement burns about one core on a
//! 2-core machine, so it measures itself rather than the servers; `upload` is the same client in
//! Rust, cheap enough to leave the cores to the server under test. `sink` is the strong baseline
//! (a server that only writes the body to disk) and, with `--discard`, the ceiling of what curl and
//! loopback allow here. `origin` serves one file as fast as the kernel can (`sendfile`), the
//! source of the link-import floor in `bench/companion`. `floor` is the receive-and-store floor:
//! a bare blocking loop that reads a PUT body and writes it to a file, the least any storing
//! server can do over loopback.
//!
//! Layout: `upload` (the concurrent tus client), `sink` (the write-only / discard server),
//! `origin` (the static file server), `floor` (the bare receiver).

mod floor;
mod origin;
mod sink;
mod upload;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Any failure, reported on stderr with a non-zero exit; never a panic.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Command line of the benchmark helper.
#[derive(Debug, Parser)]
#[command(
    name = "ferry-tus-loadgen",
    about = "tus benchmark client, sink server and static origin"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// N concurrent tus uploads (POST + one PATCH) of SIZE random bytes; prints one JSON line
    /// `{"seconds","perSecond","p50","p99","ok"}` and checks every stored file by sha256.
    Upload {
        /// Server root, e.g. http://127.0.0.1:1080 (the tus endpoint is BASE_URL/files/).
        base_url: String,
        /// Directory where the server stores upload bodies, named by the last Location segment;
        /// `-`: read every upload back with a GET instead (object stores, several instances).
        store_dir: PathBuf,
        /// Number of uploads, all started at once.
        n: usize,
        /// Bytes per upload.
        size: usize,
        /// More instances of the same fleet: upload i is created on base i mod k and patched on
        /// base i+1 mod k, so every PATCH crosses instances.
        #[arg(long = "also")]
        also: Vec<String>,
        /// With `--also`: patch each upload on the instance that created it.
        #[arg(long)]
        stay: bool,
    },
    /// HTTP server on 127.0.0.1:PORT: PUT /upload streams the body to a file or drops it,
    /// OPTIONS /files/ answers 204 (readiness probe).
    Sink {
        /// Port to listen on (127.0.0.1 only).
        port: u16,
        /// Drop every chunk instead of writing it (the loopback ceiling).
        #[arg(long, conflicts_with = "file")]
        discard: bool,
        /// Write each body to this file (truncated per request, no fsync).
        #[arg(long, required_unless_present = "discard")]
        file: Option<PathBuf>,
    },
    /// Bare receiver on 127.0.0.1:PORT (no HTTP framework, one thread): PUT stores the body
    /// in FILE with 1 MiB reads and writes, OPTIONS answers 204. The receive-and-store floor.
    Floor {
        /// Port to listen on (127.0.0.1 only).
        port: u16,
        /// Where each body is written (truncated per request, no fsync).
        #[arg(long)]
        file: PathBuf,
        /// 1: one thread reads and writes in turn; 2: a reader and a writer overlap.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        threads: u8,
    },
    /// HTTP server on 127.0.0.1:PORT answering every GET with FILE (sendfile), HEAD with its
    /// headers: the fast origin for link-import floors.
    Origin {
        /// Port to listen on (127.0.0.1 only).
        port: u16,
        /// The file every GET answers with.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    report(match Cli::parse().command {
        // Blocking threads and sendfile: no runtime needed.
        Command::Origin { port, file } => origin::run(port, file),
        Command::Floor {
            port,
            file,
            threads,
        } => floor::run(port, file, threads),
        command => run_async(command),
    })
}

/// The commands that run on a tokio runtime.
fn run_async(command: Command) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the runtime: {err}"))?;
    runtime.block_on(async {
        match command {
            Command::Upload {
                base_url,
                store_dir,
                n,
                size,
                also,
                stay,
            } => {
                let bases: Vec<String> = std::iter::once(base_url).chain(also).collect();
                upload::run(&bases, &store_dir, n, size, stay).await
            }
            Command::Sink {
                port,
                discard: _,
                file,
            } => sink::run(port, file).await,
            Command::Origin { port, file } => origin::run(port, file),
            Command::Floor {
                port,
                file,
                threads,
            } => floor::run(port, file, threads),
        }
    })
}

/// Exit status of a run; the error's whole chain on stderr.
fn report(result: Result<(), Error>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // The causes matter (refused connection, reset, ...): print the whole chain.
            let mut message = err.to_string();
            let mut source = err.source();
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("ferry-tus-loadgen: {message}");
            ExitCode::FAILURE
        }
    }
}
