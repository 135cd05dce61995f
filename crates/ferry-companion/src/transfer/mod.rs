//! The transfer engine: waits for the progress socket, then streams the source to the
//! destination with bounded memory, honouring pause / resume / cancel, retrying tus attempts
//! with Companion's delays, failing a transfer that moves no byte for the stall timeout, and
//! publishing throttled progress frames.
//!
//! # Layout
//!
//! - [`request`]: the upload body and its validation; [`source`]: reading the source.
//! - [`tus`], [`multipart`] and [`s3`]: the destinations.

pub mod multipart;
pub mod request;
pub mod s3;
pub mod source;
pub mod tus;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use crate::jobs::{Control, Job, error_frame, progress_frame, success_frame};
use crate::state::AppState;
use request::{Destination, TransferRequest};

/// Socket progress frames are sent at most this often (the spec's socket throttle).
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(300);

/// Why an attempt failed. Messages are safe to show to the user.
#[derive(Debug, thiserror::Error)]
pub enum Fail {
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
}

/// A finished transfer.
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
    fn frame(&self) -> Value {
        let total = self.total.load(Ordering::Relaxed);
        progress_frame(
            self.sent.load(Ordering::Relaxed),
            (total > 0).then_some(total),
        )
    }
}

/// What an attempt needs.
#[derive(Debug)]
pub struct Ctx {
    pub state: AppState,
    pub req: TransferRequest,
    pub progress: Arc<Progress>,
}

/// Runs the job for `token`: waits for its socket, transfers, publishes the outcome, and keeps
/// the last frame for reconnecting sockets a while before forgetting the job.
pub async fn run_job(state: AppState, token: String, job: Arc<Job>, req: TransferRequest) {
    let mut connected = job.connected.subscribe();
    let wait = tokio::time::timeout(state.config().socket_wait, async {
        connected.wait_for(|c| *c).await.is_ok()
    })
    .await;
    if wait != Ok(true) {
        tracing::info!("transfer dropped: no socket connected in time");
        state.jobs().remove(&token);
        return;
    }
    let metrics = state.metrics();
    metrics.active.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let ctx = Ctx {
        state: state.clone(),
        req,
        progress: Arc::new(Progress::default()),
    };
    ctx.progress.set_total(ctx.req.size);
    let emitter = tokio::spawn(emit_progress(job.clone(), ctx.progress.clone()));
    let result = drive(&ctx, &job).await;
    emitter.abort();
    match result {
        Ok(done) => {
            job.publish(ctx.progress.frame());
            job.publish(success_frame(&done.url, done.response));
            metrics.completed.fetch_add(1, Ordering::Relaxed);
            metrics
                .bytes
                .fetch_add(ctx.progress.sent.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        Err(Fail::Cancelled) => {
            metrics.cancelled.fetch_add(1, Ordering::Relaxed);
        }
        Err(fail) => {
            tracing::info!(error = %fail, "transfer failed");
            job.publish(error_frame(&fail.to_string()));
            metrics.failed.fetch_add(1, Ordering::Relaxed);
        }
    }
    metrics.active.fetch_sub(1, Ordering::Relaxed);
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    metrics.duration_us.fetch_add(micros, Ordering::Relaxed);
    tokio::time::sleep(state.config().keep_finished).await;
    state.jobs().remove(&token);
}

async fn emit_progress(job: Arc<Job>, progress: Arc<Progress>) {
    let mut last = u64::MAX;
    let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
    loop {
        tick.tick().await;
        let moves = progress.moves.load(Ordering::Relaxed);
        if moves != last {
            last = moves;
            job.publish(progress.frame());
        }
    }
}

/// The destination of one transfer.
enum Dest {
    Tus(tus::TusDest),
    Multipart(multipart::MultipartDest),
    S3(s3::S3Dest),
}

async fn drive(ctx: &Ctx, job: &Job) -> Result<Done, Fail> {
    let mut control = job.control.subscribe();
    let mut dest = match &ctx.req.destination {
        Destination::Tus {
            endpoint,
            upload_url,
        } => Dest::Tus(tus::TusDest::new(endpoint.clone(), upload_url.clone())),
        Destination::Multipart { .. } => Dest::Multipart(multipart::MultipartDest),
        Destination::S3(state) => Dest::S3(s3::S3Dest::new(state.clone())),
    };
    let delays = &ctx.state.config().retry_delays;
    let mut failures = 0;
    loop {
        loop {
            let now = *control.borrow_and_update();
            match now {
                Control::Run => break,
                Control::Cancel => {
                    match &dest {
                        Dest::Tus(t) => t.terminate(ctx).await,
                        Dest::S3(s) => s.terminate().await,
                        Dest::Multipart(_) => {}
                    }
                    return Err(Fail::Cancelled);
                }
                Control::Pause => {
                    if control.changed().await.is_err() {
                        return Err(Fail::Cancelled);
                    }
                }
            }
        }
        let outcome = tokio::select! {
            r = attempt(&mut dest, ctx) => r,
            () = interrupted(&mut control) => continue,
            secs = watchdog(&ctx.progress, ctx.state.config().stall_timeout) => Err(Fail::Stalled(secs)),
        };
        match outcome {
            Err(Fail::Retryable(msg))
                if matches!(dest, Dest::Tus(_)) && failures < delays.len() =>
            {
                tracing::info!(error = %msg, attempt = failures + 1, "tus attempt failed; retrying");
                tokio::time::sleep(delays[failures]).await;
                failures += 1;
            }
            Err(Fail::Retryable(msg)) => {
                tracing::info!(error = %msg, "transfer failed");
                return Err(Fail::Fatal("Upload error".into()));
            }
            other => return other,
        }
    }
}

async fn attempt(dest: &mut Dest, ctx: &Ctx) -> Result<Done, Fail> {
    match dest {
        Dest::Tus(t) => t.attempt(ctx).await,
        Dest::Multipart(m) => m.attempt(ctx).await,
        Dest::S3(s) => s.attempt(ctx).await,
    }
}

/// Resolves when the client asks for anything but running.
async fn interrupted(control: &mut watch::Receiver<Control>) {
    let closed = control.wait_for(|c| *c != Control::Run).await.is_err();
    if closed {
        std::future::pending::<()>().await;
    }
}

/// Resolves (with the timeout in seconds) when no byte moved for `stall`.
async fn watchdog(progress: &Progress, stall: Duration) -> u64 {
    let tick = (stall / 10)
        .min(Duration::from_secs(1))
        .max(Duration::from_millis(10));
    let mut last = progress.moves.load(Ordering::Relaxed);
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        let now = progress.moves.load(Ordering::Relaxed);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= stall {
            return stall.as_secs().max(1);
        }
    }
}
