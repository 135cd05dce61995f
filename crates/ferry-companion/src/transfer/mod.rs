//! The transfer engine: streams a [`Source`] to a [`Destination`] with bounded memory,
//! honouring pause / resume / cancel from the progress socket, retrying the attempts of
//! destinations that can resume with Companion's delays, failing a transfer that moves no byte
//! for the stall timeout, and publishing throttled progress frames.
//!
//! A new source (a cloud provider's download) or a new destination (a cloud provider's upload)
//! is one file implementing [`Source`] or [`Destination`]; destinations are registered by
//! protocol name in [`destination`].
//!
//! # Layout
//!
//! - [`request`]: the `/url/get` body, its shared fields and the allowlist check.
//! - [`launch`]: [`start`] a new transfer through the registry, or [`resume`] one taken over.
//! - [`run`]: [`run_job`], the attempt loop, the stall watchdog and the progress emitter.
//! - [`source`]: the [`Source`] trait; [`url_source`]: a public URL, the first source.
//! - [`feeder`]: an open source handed out in bounded slices and request bodies.
//! - [`destination`]: the [`Destination`] trait and the protocol table; [`tus`],
//!   [`multipart`] and [`s3`]: the destinations.
//! - [`local`]: this server's own application, attached by the binary, to which the tus
//!   destination hands requests for its own endpoint in process; `tus_call`: one tus request,
//!   sent over HTTP or that way.

pub mod destination;
pub mod feeder;
pub mod launch;
pub mod local;
pub mod multipart;
pub mod request;
pub mod run;
pub mod s3;
pub mod source;
pub mod tus;
mod tus_call;
pub mod url_source;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::jobs::{Job, progress_frame, waiting_frame};
use crate::state::AppState;

pub use destination::Destination;
pub use feeder::Feeder;
pub use launch::{Resumed, resume, start};
pub use local::{LocalApp, LocalEndpoint};
pub use run::{PROGRESS_INTERVAL, run_job};
pub use source::Source;

/// The checkpoint hint holding the source's validator.
pub const SOURCE_VALIDATOR: &str = "source_validator";

/// Why an attempt failed. Messages are safe to show to the user.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TransferError {
    /// Worth another attempt (network, 5xx, short source).
    #[error("{0}")]
    Retryable(String),
    /// Final.
    #[error("{0}")]
    Fatal(String),
    /// No progress for the stall timeout.
    #[error("Upload stalled for {0} seconds, aborting.")]
    Stalled(u64),
    /// The client cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Stopped for another instance to go on (shutdown or lost ownership).
    #[error("handed over")]
    Yielded,
}

/// A finished transfer: the uploaded file's URL and the destination's answer, as the success
/// frame carries them.
#[derive(Debug)]
pub struct Done {
    pub url: String,
    pub response: Option<Value>,
}

/// Bytes moved so far, and a counter of movements for the stall watchdog.
#[derive(Debug, Default)]
pub struct Progress {
    sent: AtomicU64,
    moves: AtomicU64,
    /// Waits the source announced: signs of life for the watchdog, not progress to publish.
    waits: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// Records the absolute position reached.
    pub fn set(&self, sent: u64) {
        self.sent.store(sent, Ordering::Relaxed);
        self.moves.fetch_add(1, Ordering::Relaxed);
    }
    /// Records the total length (0: unknown).
    pub fn set_total(&self, total: Option<u64>) {
        self.total.store(total.unwrap_or(0), Ordering::Relaxed);
    }
    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
    fn moves(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }
    /// Movements and announced waits: what keeps the stall watchdog quiet.
    fn activity(&self) -> u64 {
        self.moves() + self.waits.load(Ordering::Relaxed)
    }
    fn frame(&self) -> Value {
        let total = self.total.load(Ordering::Relaxed);
        progress_frame(self.sent(), (total > 0).then_some(total))
    }
}

/// One running transfer as its destination sees it: the source, what the client said about the
/// file, and where progress goes.
#[derive(Debug)]
pub struct Transfer {
    pub state: AppState,
    pub source: Box<dyn Source>,
    /// Size the client announced (the source's own length wins when it gives one).
    pub size: Option<u64>,
    /// Metadata values as strings.
    pub metadata: BTreeMap<String, String>,
    /// Filtered headers for the destination.
    pub headers: HeaderMap,
    /// Largest file it may carry (server cap and token limit).
    pub limit: Option<u64>,
    pub progress: Arc<Progress>,
    /// The job's shared handles (checkpoint hints go there).
    pub job: Arc<Job>,
}

impl Transfer {
    /// Opens the source at byte `from`, refusing one longer than the size cap. While it
    /// opens, [`source_waiting`] reaches this transfer's socket.
    pub async fn open(&self, from: u64) -> Result<Feeder, TransferError> {
        let opening = Opening {
            job: self.job.clone(),
            progress: self.progress.clone(),
        };
        let opened = OPENING.scope(opening, self.source.open(from)).await?;
        // What another instance needs to reopen the same file (`If-Range`).
        if let Some(validator) = self.source.validator() {
            self.job.remember(SOURCE_VALIDATOR, &validator);
        }
        let total = self.source.size();
        let max = self.limit;
        if let (Some(total), Some(max)) = (total, max) {
            if total > max {
                return Err(TransferError::Fatal("File size exceeds limit".into()));
            }
        }
        self.progress.set(from);
        Ok(Feeder::new(opened, from, total, max, self.progress.clone()))
    }

    /// The file's name: the client's `name` metadata, else the source's, else `file`.
    pub fn file_name(&self) -> String {
        self.metadata
            .get("name")
            .cloned()
            .or_else(|| self.source.name())
            .unwrap_or_else(|| "file".into())
    }

    /// Records a checkpoint hint for a resume on another instance.
    pub fn remember(&self, name: &str, value: &str) {
        self.job.remember(name, value);
    }

    /// The HTTP client for allowlisted destinations.
    pub fn client(&self) -> &reqwest::Client {
        self.state.destinations().client()
    }
}

/// The transfer whose source is being opened, for [`source_waiting`].
#[derive(Clone, Debug)]
struct Opening {
    job: Arc<Job>,
    progress: Arc<Progress>,
}

tokio::task_local! {
    static OPENING: Opening;
}

/// Called by a source while [`Transfer::open`] opens it: it waits `retry_after` seconds (a
/// provider's rate limit) before going on. The socket gets a `waiting` frame with `message`,
/// and the stall watchdog counts the wait as a sign of life.
pub fn source_waiting(retry_after: u64, message: &str) {
    let _ = OPENING.try_with(|o| {
        o.progress.waits.fetch_add(1, Ordering::Relaxed);
        o.job.publish(&waiting_frame(retry_after, message));
    });
}
