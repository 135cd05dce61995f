//! [`HookSender`]: the [`Hooks`] implementation behind `--hooks-http` and `--hooks-dir`. It
//! filters by enabled events, runs blocking hooks under the timeout, and delivers
//! notifications from a bounded queue in the background; the transports (`http`, `file`) only
//! carry one hook request to the receiver and its answer back.
//!
//! Memory is bounded: at most `queue_capacity` notifications wait and `max_in_flight` are
//! being delivered. When the queue is full a new notification is dropped, counted in
//! [`HookStats::dropped`] and logged (at the first drop and then at every power of two, so a
//! flood cannot flood the log too); the upload is never made to wait.

mod file;
mod http;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::time::Instant;

use crate::config::HooksConfig;
use crate::decision::HookDecision;
use crate::error::HookError;
use crate::event::HookEvent;
use crate::hooks::{HookStats, Hooks, StopSignal};
use crate::kind::{EnabledEvents, HookType};
use crate::response::HookResponse;

/// Carries one hook request to a receiver and brings its answer back.
#[async_trait]
trait Transport: Send + Sync + std::fmt::Debug {
    /// Sends `event`. With a `deadline` (blocking hooks) no attempt or retry runs past it.
    async fn send(
        &self,
        event: &HookEvent,
        deadline: Option<Instant>,
    ) -> Result<HookResponse, HookError>;
}

/// Sends hooks over HTTP or to executables in a directory. Cheap to clone; clones share the
/// queue. Must be created inside a Tokio runtime (it spawns its delivery task); the task ends
/// when the last clone is dropped, after delivering what was queued.
#[derive(Debug, Clone)]
pub struct HookSender {
    shared: Arc<Shared>,
    queue: mpsc::Sender<Job>,
    enabled: EnabledEvents,
    timeout: Duration,
    progress_interval: Duration,
}

#[derive(Debug)]
struct Shared {
    transport: Box<dyn Transport>,
    sent: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    /// Notifications queued or being delivered; [`HookSender::flush`] waits for zero.
    pending: watch::Sender<usize>,
}

#[derive(Debug)]
struct Job {
    event: HookEvent,
    stop: Option<StopSignal>,
}

impl HookSender {
    /// The sender `config` asks for: HTTP for `http`, executables for `dir`, `None` when
    /// neither is set. Both at once is an error rather than a silent choice.
    pub fn from_config(config: &HooksConfig) -> Result<Option<Self>, HookError> {
        match (&config.http, &config.dir) {
            (Some(_), Some(_)) => Err(HookError::Config(
                "--hooks-http and --hooks-dir cannot be used together".to_owned(),
            )),
            (Some(url), None) => Self::http(config, url).map(Some),
            (None, Some(dir)) => Self::file(config, dir).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// POSTs each hook as JSON to `url`.
    pub fn http(config: &HooksConfig, url: &str) -> Result<Self, HookError> {
        let transport = http::HttpTransport::new(config, url)?;
        tracing::info!(endpoint = %crate::config::redact_url(url), "sending hooks over HTTP");
        Ok(Self::start(config, Box::new(transport)))
    }

    /// Runs `dir/<hook type>` for each hook, as tusd's file hooks do.
    pub fn file(config: &HooksConfig, dir: &Path) -> Result<Self, HookError> {
        let transport = file::FileTransport::new(config, dir)?;
        tracing::info!(dir = %dir.display(), "running hook executables");
        Ok(Self::start(config, Box::new(transport)))
    }

    fn start(config: &HooksConfig, transport: Box<dyn Transport>) -> Self {
        let (queue, jobs) = mpsc::channel(config.queue_capacity.max(1));
        let shared = Arc::new(Shared {
            transport,
            sent: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            pending: watch::Sender::new(0),
        });
        tokio::spawn(dispatch(jobs, shared.clone(), config.max_in_flight.max(1)));
        Self {
            shared,
            queue,
            enabled: config.enabled_events,
            timeout: config.timeout,
            progress_interval: config.progress_interval,
        }
    }

    /// Waits until every queued notification has been delivered or given up on; for a
    /// graceful shutdown (bound it with a timeout).
    pub async fn flush(&self) {
        let mut pending = self.shared.pending.subscribe();
        // The sender lives in `self.shared`, so the channel stays open while we wait.
        let _ = pending.wait_for(|n| *n == 0).await;
    }

    /// What happened so far.
    pub fn stats(&self) -> HookStats {
        HookStats {
            sent: self.shared.sent.load(Ordering::Relaxed),
            failed: self.shared.failed.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
        }
    }

    fn enqueue(&self, event: HookEvent, stop: Option<StopSignal>) {
        if !self.enabled.contains(event.hook) {
            return;
        }
        self.shared.pending.send_modify(|n| *n += 1);
        if let Err(refused) = self.queue.try_send(Job { event, stop }) {
            self.shared.pending.send_modify(|n| *n -= 1);
            let job = match refused {
                mpsc::error::TrySendError::Full(job) | mpsc::error::TrySendError::Closed(job) => {
                    job
                }
            };
            let dropped = self.shared.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(
                    hook = %job.event.hook,
                    upload = %job.event.upload().id,
                    dropped_so_far = dropped,
                    "hook queue is full: notification dropped"
                );
            }
        }
    }
}

#[async_trait]
impl Hooks for HookSender {
    fn enabled(&self, hook: HookType) -> bool {
        self.enabled.contains(hook)
    }

    async fn blocking(&self, event: HookEvent) -> Result<HookDecision, HookError> {
        let hook = event.hook;
        if !self.enabled.contains(hook) {
            return Ok(HookDecision::proceed());
        }
        let deadline = Instant::now() + self.timeout;
        let sent = tokio::time::timeout(
            self.timeout,
            self.shared.transport.send(&event, Some(deadline)),
        )
        .await
        .unwrap_or(Err(HookError::Timeout {
            hook,
            after: self.timeout,
        }));
        let decision = sent.and_then(|response| HookDecision::from_response(hook, response));
        match &decision {
            Ok(_) => self.shared.sent.fetch_add(1, Ordering::Relaxed),
            Err(err) => {
                tracing::warn!(upload = %event.upload().id, error = %err.detail(), "blocking hook failed");
                self.shared.failed.fetch_add(1, Ordering::Relaxed)
            }
        };
        decision
    }

    fn notify(&self, event: HookEvent) {
        self.enqueue(event, None);
    }

    fn notify_progress(&self, event: HookEvent, stop: &StopSignal) {
        self.enqueue(event, Some(stop.clone()));
    }

    fn progress_interval(&self) -> Duration {
        self.progress_interval
    }

    fn stats(&self) -> Option<HookStats> {
        Some(HookSender::stats(self))
    }
}

/// Takes queued notifications one by one, never more than `max_in_flight` at once. The permit
/// is taken before the job, so a waiting job stays in the bounded queue, not in this task.
async fn dispatch(mut jobs: mpsc::Receiver<Job>, shared: Arc<Shared>, max_in_flight: usize) {
    let permits = Arc::new(Semaphore::new(max_in_flight));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let Some(job) = jobs.recv().await else {
            break;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            shared.deliver(job).await;
            drop(permit);
        });
    }
}

impl Shared {
    async fn deliver(&self, job: Job) {
        let hook = job.event.hook;
        match self.transport.send(&job.event, None).await {
            Ok(response) => {
                self.sent.fetch_add(1, Ordering::Relaxed);
                if let Some(stop) = &job.stop {
                    match HookDecision::stop_from_response(hook, &response) {
                        Ok(Some(reply)) => {
                            tracing::info!(upload = %job.event.upload().id, "hook stopped the upload");
                            stop.stop(reply);
                        }
                        Ok(None) => {}
                        Err(err) => {
                            tracing::warn!(upload = %job.event.upload().id, error = %err.detail(), "unusable StopUpload answer ignored");
                        }
                    }
                }
            }
            Err(err) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(upload = %job.event.upload().id, error = %err.detail(), "hook notification given up");
            }
        }
        self.pending.send_modify(|n| *n -= 1);
    }
}
