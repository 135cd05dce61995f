//! Running one job: wait for its progress socket, drive attempts of the destination until one
//! finishes (pausing, resuming, cancelling and retrying as asked), publish the outcome, and keep
//! the last frame for reconnecting sockets a while. A job told to yield (its instance shuts down
//! or lost it to another) stops at once and publishes nothing: the other instance goes on.
//! Every timer is tokio's, so tests can run a transfer on a paused clock.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ferry_hooks::{HookEvent, HookType, HttpRequestInfo, Upload};
use tokio::sync::watch;
use tokio::time::Instant;

use super::request::TransferRequest;
use super::{Destination, Done, Progress, Transfer, TransferError};
use crate::jobs::{Control, Job, Outcome, error_frame, success_frame};
use crate::state::AppState;

/// Socket progress frames are sent at most this often (the spec's socket throttle).
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(300);

/// Runs the job for `token`: waits for its socket, transfers, publishes the outcome, and keeps
/// the last frame for reconnecting sockets a while before forgetting the job.
pub async fn run_job(state: AppState, token: String, job: Arc<Job>, request: TransferRequest) {
    let mut connected = job.connected.subscribe();
    let mut control = job.control.subscribe();
    let wait = tokio::time::timeout(state.config().socket_wait, async {
        tokio::select! {
            c = connected.wait_for(|c| *c) => c.is_ok(),
            // Handed over before any socket came: the next owner waits for it.
            _ = control.wait_for(|c| *c == Control::Yield) => false,
        }
    })
    .await;
    if wait != Ok(true) {
        let outcome = if *job.control.borrow() == Control::Yield {
            Outcome::Yielded
        } else {
            tracing::info!("transfer dropped: no socket connected in time");
            Outcome::Abandoned
        };
        job.end(outcome);
        state.registry().remove(&token);
        return;
    }
    let metrics = state.metrics();
    metrics.active.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let TransferRequest {
        source,
        mut destination,
        size,
        metadata,
        headers,
        hook_request,
        limit,
        ..
    } = request;
    let transfer = Transfer {
        state: state.clone(),
        source,
        size,
        metadata,
        headers,
        limit,
        progress: Arc::new(Progress::default()),
        job: job.clone(),
    };
    transfer.progress.set_total(size);
    let emitter = tokio::spawn(emit_progress(job.clone(), transfer.progress.clone()));
    let result = drive(&transfer, destination.as_mut(), &job).await;
    emitter.abort();
    let outcome = match result {
        Ok(done) => {
            if let Some(request) = hook_request {
                report_finished(&transfer, destination.as_ref(), &done, request);
            }
            job.publish(&transfer.progress.frame());
            job.publish(&success_frame(&done.url, done.response));
            metrics.completed.fetch_add(1, Ordering::Relaxed);
            metrics
                .bytes
                .fetch_add(transfer.progress.sent(), Ordering::Relaxed);
            Outcome::Succeeded
        }
        Err(TransferError::Cancelled) => {
            metrics.cancelled.fetch_add(1, Ordering::Relaxed);
            Outcome::Cancelled
        }
        Err(TransferError::Yielded) => {
            tracing::info!("transfer handed over to another instance");
            Outcome::Yielded
        }
        Err(error) => {
            tracing::info!(%error, "transfer failed");
            job.publish(&error_frame(&error.to_string()));
            metrics.failed.fetch_add(1, Ordering::Relaxed);
            Outcome::Failed
        }
    };
    job.end(outcome);
    metrics.active.fetch_sub(1, Ordering::Relaxed);
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    metrics.duration_us.fetch_add(micros, Ordering::Relaxed);
    if outcome != Outcome::Yielded {
        tokio::time::sleep(state.config().keep_finished).await;
    }
    state.registry().remove(&token);
}

/// post-finish: where the destination stored the file, and where it came from.
fn report_finished(
    transfer: &Transfer,
    destination: &dyn Destination,
    done: &Done,
    request: HttpRequestInfo,
) {
    let hooks = &transfer.state.config().hooks;
    let sent = transfer.progress.sent();
    let mut storage = destination.storage(done);
    if let Some(origin) = transfer.source.origin() {
        storage = storage.with("Source", origin);
    }
    let upload = Upload {
        // The file's name at its destination: the last segment of its URL.
        id: done
            .url
            .rsplit('/')
            .find(|s| !s.is_empty())
            .unwrap_or_default()
            .to_owned(),
        size: Some(sent),
        offset: sent,
        metadata: transfer.metadata.clone(),
        storage: Some(storage),
        ..Upload::default()
    };
    hooks.notify(HookEvent::new(HookType::PostFinish, upload, request));
}

async fn emit_progress(job: Arc<Job>, progress: Arc<Progress>) {
    let mut last = u64::MAX;
    let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
    loop {
        tick.tick().await;
        let moves = progress.moves();
        if moves != last {
            last = moves;
            job.publish(&progress.frame());
        }
    }
}

/// Attempts until the destination finishes, the client cancels, or a failure is final.
async fn drive(
    transfer: &Transfer,
    destination: &mut dyn Destination,
    job: &Job,
) -> Result<Done, TransferError> {
    let mut control = job.control.subscribe();
    let delays = &transfer.state.config().retry_delays;
    let stall = transfer.state.config().stall_timeout;
    let mut failures = 0;
    loop {
        loop {
            let now = *control.borrow_and_update();
            match now {
                Control::Run => break,
                Control::Cancel => {
                    destination.cancel(transfer).await;
                    return Err(TransferError::Cancelled);
                }
                Control::Yield => return Err(TransferError::Yielded),
                Control::Pause => {
                    if control.changed().await.is_err() {
                        return Err(TransferError::Cancelled);
                    }
                }
            }
        }
        let outcome = tokio::select! {
            r = destination.attempt(transfer) => r,
            () = interrupted(&mut control) => continue,
            secs = watchdog(&transfer.progress, stall) => Err(TransferError::Stalled(secs)),
        };
        match outcome {
            Err(TransferError::Retryable(msg))
                if destination.retries() && failures < delays.len() =>
            {
                tracing::info!(error = %msg, attempt = failures + 1, "attempt failed; retrying");
                tokio::time::sleep(delays[failures]).await;
                failures += 1;
            }
            Err(TransferError::Retryable(msg)) => {
                tracing::info!(error = %msg, "transfer failed");
                return Err(TransferError::Fatal("Upload error".into()));
            }
            other => return other,
        }
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
    let mut last = progress.activity();
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        let now = progress.activity();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= stall {
            return stall.as_secs().max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_fires_after_the_stall_and_not_before() {
        let progress = Progress::default();
        let stall = Duration::from_secs(30);
        let start = Instant::now();
        assert_eq!(watchdog(&progress, stall).await, 30);
        let waited = start.elapsed();
        assert!(
            waited >= stall && waited <= stall + stall / 10,
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn movement_restarts_the_stall_clock() {
        let progress = Arc::new(Progress::default());
        let stall = Duration::from_secs(10);
        let mover = progress.clone();
        tokio::spawn(async move {
            for at in 1..=5u64 {
                tokio::time::sleep(Duration::from_secs(5)).await;
                mover.set(at);
            }
        });
        let start = Instant::now();
        assert_eq!(watchdog(&progress, stall).await, 10);
        // The last move was at 25 s, so the stall ends at 35 s at the earliest.
        assert!(
            start.elapsed() >= Duration::from_secs(35),
            "{:?}",
            start.elapsed()
        );
    }
}
