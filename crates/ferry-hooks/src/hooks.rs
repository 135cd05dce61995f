//! The seam between the upload libraries and whoever listens: [`Hooks`], the one trait
//! ferry-tus, ferry-form and ferry-companion call at each point of an upload's life, the
//! [`NoHooks`] default, [`HookStats`], the delivery counters an implementation may report, and
//! [`StopSignal`], the way a post-receive answer reaches the request that is still writing bytes.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::watch;

use crate::decision::{HookDecision, HookReply};
use crate::error::HookError;
use crate::event::HookEvent;
use crate::kind::HookType;

/// tusd's default progress interval (`-progress-hooks-interval`, 1s).
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Where upload libraries send lifecycle events. They never learn the transport.
///
/// - pre-create, pre-finish, pre-terminate: `blocking(event).await` and act on the decision;
///   an `Err` is answered with [`HookError::status_code`] and the error's `Display`.
/// - post-create, post-finish, post-terminate: `notify(event)`; it returns at once.
/// - post-receive: build a [`crate::ProgressThrottle`] from [`Hooks::progress_interval`] and
///   call `notify_progress(event, &stop)` when it says so; select on [`StopSignal::stopped`]
///   while writing.
///
/// Check [`Hooks::enabled`] first to skip building events nobody wants.
#[async_trait]
pub trait Hooks: Send + Sync + fmt::Debug {
    /// Whether `hook` is sent at all.
    fn enabled(&self, hook: HookType) -> bool;

    /// Sends `event` and waits for the receiver's decision (at most the configured timeout).
    /// A disabled hook is [`HookDecision::proceed`] at once.
    async fn blocking(&self, event: HookEvent) -> Result<HookDecision, HookError>;

    /// Queues `event` for delivery in the background and returns at once; failures are
    /// retried and logged, never reported to the caller.
    fn notify(&self, event: HookEvent);

    /// [`Hooks::notify`] for post-receive: if the receiver answers `StopUpload`, `stop` is
    /// triggered with the reply for the client.
    fn notify_progress(&self, event: HookEvent, stop: &StopSignal) {
        let _ = stop;
        self.notify(event);
    }

    /// How often post-receive may be sent for one upload.
    fn progress_interval(&self) -> Duration {
        DEFAULT_PROGRESS_INTERVAL
    }

    /// Delivery counters, for metrics; `None` when nothing is sent anywhere.
    fn stats(&self) -> Option<HookStats> {
        None
    }
}

/// Counters of what happened to hooks since start, for logs and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HookStats {
    /// Hooks the receiver answered with a usable response.
    pub sent: u64,
    /// Hooks that failed (after their retries).
    pub failed: u64,
    /// Notifications dropped because the queue was full.
    pub dropped: u64,
}

/// No listener: every hook is disabled, every blocking hook proceeds.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

#[async_trait]
impl Hooks for NoHooks {
    fn enabled(&self, _hook: HookType) -> bool {
        false
    }

    async fn blocking(&self, _event: HookEvent) -> Result<HookDecision, HookError> {
        Ok(HookDecision::proceed())
    }

    fn notify(&self, _event: HookEvent) {}
}

/// Set once when a hook asks to stop a running upload; the writing request watches it.
///
/// Cheap to clone; all clones share the one signal. The first stop wins.
#[derive(Clone)]
pub struct StopSignal(Arc<watch::Sender<Option<HookReply>>>);

impl StopSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self(Arc::new(watch::Sender::new(None)))
    }

    /// Fires the signal with the reply for the client; later calls are ignored.
    pub fn stop(&self, reply: HookReply) {
        self.0.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(reply);
            true
        });
    }

    /// The reply, if the signal has fired.
    pub fn reply(&self) -> Option<HookReply> {
        self.0.borrow().clone()
    }

    /// Waits until the signal fires; for `tokio::select!` next to the body stream.
    pub async fn stopped(&self) -> HookReply {
        let mut receiver = self.0.subscribe();
        loop {
            if let Some(reply) = receiver.borrow_and_update().clone() {
                return reply;
            }
            // The sender lives in `self`, so the channel cannot close while we wait.
            if receiver.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

impl Default for StopSignal {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StopSignal")
            .field("stopped", &self.0.borrow().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{HttpRequestInfo, Upload};
    use http::{HeaderMap, StatusCode};

    fn reply(body: &str) -> HookReply {
        HookReply {
            status: StatusCode::BAD_REQUEST,
            headers: HeaderMap::new(),
            body: body.to_owned(),
        }
    }

    #[tokio::test]
    async fn no_hooks_proceeds_and_enables_nothing() {
        let hooks: Arc<dyn Hooks> = Arc::new(NoHooks);
        let event = HookEvent::new(
            HookType::PreCreate,
            Upload::default(),
            HttpRequestInfo::default(),
        );
        assert_eq!(
            hooks.blocking(event.clone()).await.ok(),
            Some(HookDecision::proceed())
        );
        assert!(HookType::ALL.into_iter().all(|h| !hooks.enabled(h)));
        let stop = StopSignal::new();
        hooks.notify_progress(event.with_hook(HookType::PostReceive), &stop);
        assert_eq!(stop.reply(), None);
        assert_eq!(hooks.progress_interval(), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn stop_signal_wakes_a_waiter_and_keeps_the_first_reply() {
        let stop = StopSignal::new();
        let waiter = tokio::spawn({
            let stop = stop.clone();
            async move { stop.stopped().await }
        });
        tokio::task::yield_now().await;
        stop.stop(reply("first"));
        stop.stop(reply("second"));
        let got = waiter.await.expect("join");
        assert_eq!(got.body, "first");
        assert_eq!(stop.reply().map(|r| r.body), Some("first".to_owned()));
        // A waiter arriving after the fact returns at once.
        assert_eq!(stop.stopped().await.body, "first");
    }
}
