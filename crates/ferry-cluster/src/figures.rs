//! Counters an instance keeps about its coordination, read by `/metrics` and `/health`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// Live counters shared by the handle's parts.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) reachable: AtomicBool,
    pub(crate) subscriber_connected: AtomicBool,
    pub(crate) leases_held: AtomicI64,
    pub(crate) leases_lost: AtomicU64,
    pub(crate) release_requests_sent: AtomicU64,
    pub(crate) release_requests_received: AtomicU64,
    pub(crate) transfers_owned: AtomicI64,
    pub(crate) takeovers: AtomicU64,
    pub(crate) handovers: AtomicU64,
    pub(crate) pubsub_reconnects: AtomicU64,
    pub(crate) pubsub_lag_ms_last: AtomicU64,
    pub(crate) pubsub_lag_ms_max: AtomicU64,
    pub(crate) redis_errors: AtomicU64,
}

impl Counters {
    pub(crate) fn lag(&self, ms: u64) {
        self.pubsub_lag_ms_last.store(ms, Ordering::Relaxed);
        self.pubsub_lag_ms_max.fetch_max(ms, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, instance_id: &str) -> Figures {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Figures {
            instance_id: instance_id.to_owned(),
            redis_reachable: self.reachable.load(Ordering::Relaxed),
            subscriber_connected: self.subscriber_connected.load(Ordering::Relaxed),
            leases_held: self.leases_held.load(Ordering::Relaxed).max(0) as u64,
            leases_lost: get(&self.leases_lost),
            release_requests_sent: get(&self.release_requests_sent),
            release_requests_received: get(&self.release_requests_received),
            transfers_owned: self.transfers_owned.load(Ordering::Relaxed).max(0) as u64,
            takeovers: get(&self.takeovers),
            handovers: get(&self.handovers),
            pubsub_reconnects: get(&self.pubsub_reconnects),
            pubsub_lag_ms_last: get(&self.pubsub_lag_ms_last),
            pubsub_lag_ms_max: get(&self.pubsub_lag_ms_max),
            redis_errors: get(&self.redis_errors),
        }
    }
}

/// A snapshot of one instance's coordination figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figures {
    /// This instance's name in Redis.
    pub instance_id: String,
    /// Whether the last command reached Redis.
    pub redis_reachable: bool,
    /// Whether the shared subscriber connection is up.
    pub subscriber_connected: bool,
    /// Upload lock leases this instance holds now.
    pub leases_held: u64,
    /// Leases that expired or were taken while held (the holder was told to stop).
    pub leases_lost: u64,
    /// Release requests this instance sent to other holders.
    pub release_requests_sent: u64,
    /// Release requests that reached a holder on this instance.
    pub release_requests_received: u64,
    /// Transfers this instance owns now.
    pub transfers_owned: u64,
    /// Transfers this instance claimed from a silent or departed owner.
    pub takeovers: u64,
    /// Transfers this instance handed over (shutdown).
    pub handovers: u64,
    /// Times the subscriber connection came back and re-subscribed.
    pub pubsub_reconnects: u64,
    /// Publish-to-receive delay of the last replayed message (milliseconds).
    pub pubsub_lag_ms_last: u64,
    /// Largest publish-to-receive delay seen (milliseconds).
    pub pubsub_lag_ms_max: u64,
    /// Commands that failed because Redis was unreachable or timed out.
    pub redis_errors: u64,
}
