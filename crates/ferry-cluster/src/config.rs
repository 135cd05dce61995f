//! What an instance needs to join a cluster: where Redis is, the key prefix, its own name and the
//! timings of leases and takeovers. Defaults follow `reference/scale-out.md` (lease 15 s renewed
//! every 5 s, lock wait 20 s like tusd, takeover 30 s); tests shorten them.

use std::time::Duration;

/// Settings of one instance's [`crate::Cluster`] handle.
#[derive(Clone)]
pub struct ClusterConfig {
    /// `redis://` or `rediss://` URL (`--redis-url`, `FERRY_REDIS_URL`).
    pub url: String,
    /// Prefix of every key and channel (`--redis-prefix`, default `ferry:`).
    pub prefix: String,
    /// This instance's name in Redis; `None` picks `<pid>-<random>`. Must be unique in the fleet.
    pub instance_id: Option<String>,
    /// Lifetime of an upload lock lease; the holder renews it every [`Self::lock_renew`].
    pub lock_ttl: Duration,
    /// How often a lock holder renews its lease.
    pub lock_renew: Duration,
    /// How long `lock` waits for a holder to let go before answering [`crate::ClusterError::LockBusy`].
    pub lock_wait: Duration,
    /// How often a waiting `lock` retries besides waking on the release notice.
    pub lock_poll: Duration,
    /// Silence after which another instance claims a transfer (`--transfer-takeover`).
    pub transfer_takeover: Duration,
    /// Deadline of one Redis command (redis-rs 1.x defaults to 500 ms).
    pub response_timeout: Duration,
    /// Deadline of one connection attempt (redis-rs 1.x defaults to 1 s).
    pub connect_timeout: Duration,
}

impl ClusterConfig {
    /// The defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: "ferry:".to_owned(),
            instance_id: None,
            lock_ttl: Duration::from_secs(15),
            lock_renew: Duration::from_secs(5),
            lock_wait: Duration::from_secs(20),
            lock_poll: Duration::from_millis(250),
            transfer_takeover: Duration::from_secs(30),
            response_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_secs(1),
        }
    }

    /// Owner heartbeat cadence: six beats per takeover window (5 s for the default 30 s).
    pub fn transfer_heartbeat(&self) -> Duration {
        self.transfer_takeover / 6
    }

    /// Lifetime of a transfer owner's lease: three quarters of the takeover window, so the lease
    /// is always gone by the time the stream entry has been idle long enough to be claimed.
    pub fn transfer_lease(&self) -> Duration {
        self.transfer_takeover * 3 / 4
    }
}

impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("url", &crate::cluster::redact(&self.url))
            .field("prefix", &self.prefix)
            .field("instance_id", &self.instance_id)
            .field("lock_ttl", &self.lock_ttl)
            .field("lock_renew", &self.lock_renew)
            .field("lock_wait", &self.lock_wait)
            .field("transfer_takeover", &self.transfer_takeover)
            .finish_non_exhaustive()
    }
}
