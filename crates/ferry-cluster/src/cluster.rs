//! The per-instance handle: one command connection (redis-rs `ConnectionManager`, reconnecting in
//! the background), one shared subscriber connection ([`crate::pubsub`]), the instance's name and
//! its counters. Every command runs under a deadline, so an outage turns into
//! [`ClusterError::Unavailable`] within about two seconds instead of a hung request.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::RngCore;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, FromRedisValue, Pipeline, Script, ToRedisArgs};
use tokio_util::sync::CancellationToken;

use crate::config::ClusterConfig;
use crate::error::{ClusterError, Result};
use crate::figures::{Counters, Figures};
use crate::keys::Keys;
use crate::pubsub::Hub;

/// One instance's connection to the cluster; cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: ClusterConfig,
    pub(crate) instance: String,
    pub(crate) keys: Keys,
    conn: ConnectionManager,
    pub(crate) hub: Hub,
    pub(crate) counters: Arc<Counters>,
    /// Cancelled by [`Cluster::halt`]: every background task of the instance stops.
    pub(crate) halt: CancellationToken,
    /// Stop signals of the leases held here, by lock value, for release requests.
    pub(crate) holders: Mutex<HashMap<String, CancellationToken>>,
    /// Transfers owned here, by token (for hand-over at shutdown).
    pub(crate) owned: Mutex<HashMap<String, Owned>>,
}

/// What an instance knows about a transfer it owns, for hand-over at shutdown
/// ([`crate::TransferRegistry::drain`]); kept here, beside the table that holds it.
#[derive(Debug, Clone)]
pub(crate) struct Owned {
    /// The ownership's epoch (fencing token).
    pub(crate) epoch: u64,
    /// Its stream entry (it changes if the record is restored after a Redis restart).
    pub(crate) entry: String,
    /// Fired to ask the transfer to checkpoint and hand over.
    pub(crate) drain: CancellationToken,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("instance", &self.inner.instance)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// The URL with any password replaced, for messages and logs.
pub(crate) fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "(unparsable URL)".to_owned(),
    }
}

fn valid_instance_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn generated_instance_id() -> String {
    let mut bytes = [0u8; 4];
    rand::rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", std::process::id())
}

impl Cluster {
    /// Connects to Redis, checks it answers, and starts the shared subscriber. Fails with
    /// [`ClusterError::Unreachable`] when Redis is not there, [`ClusterError::InvalidUrl`] when
    /// the URL (or the instance id) is unusable.
    pub async fn connect(config: ClusterConfig) -> Result<Self> {
        let shown = redact(&config.url);
        let invalid = |reason: String| ClusterError::InvalidUrl {
            url: shown.clone(),
            reason,
        };
        let scheme = config.url.split("://").next().unwrap_or_default();
        if !matches!(scheme, "redis" | "rediss") {
            return Err(invalid(
                "the scheme must be redis:// or rediss://".to_owned(),
            ));
        }
        let instance = config
            .instance_id
            .clone()
            .unwrap_or_else(generated_instance_id);
        if !valid_instance_id(&instance) {
            return Err(invalid(format!(
                "instance id {instance:?} must be 1-64 letters, digits, '-', '_' or '.'"
            )));
        }
        let client = Client::open(config.url.as_str()).map_err(|e| invalid(e.to_string()))?;
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.connect_timeout))
            .set_response_timeout(Some(config.response_timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_millis(500));
        let unreachable = |e: &dyn std::fmt::Display| ClusterError::Unreachable {
            url: shown.clone(),
            reason: e.to_string(),
        };
        let budget = config.connect_timeout * 3;
        let conn = tokio::time::timeout(
            budget,
            ConnectionManager::new_with_config(client.clone(), manager_config),
        )
        .await
        .map_err(|e| unreachable(&e))?
        .map_err(|e| unreachable(&e))?;
        let counters = Arc::new(Counters::default());
        let halt = CancellationToken::new();
        let hub = Hub::start(
            client,
            config.connect_timeout,
            counters.clone(),
            halt.clone(),
        );
        let cluster = Self {
            inner: Arc::new(Inner {
                keys: Keys::new(&config.prefix),
                instance,
                config,
                conn,
                hub,
                counters,
                halt,
                holders: Mutex::default(),
                owned: Mutex::default(),
            }),
        };
        cluster.ping().await.map_err(|e| unreachable(&e))?;
        crate::lock::listen_for_release_requests(&cluster).await?;
        Ok(cluster)
    }

    /// This instance's name in Redis.
    pub fn instance_id(&self) -> &str {
        &self.inner.instance
    }

    /// The settings it was built from.
    pub fn config(&self) -> &ClusterConfig {
        &self.inner.config
    }

    /// One `PING`; its round trip, or [`ClusterError::Unavailable`] (for `/health`).
    pub async fn ping(&self) -> Result<Duration> {
        let started = Instant::now();
        let _: String = self.query(&mut redis::cmd("PING")).await?;
        Ok(started.elapsed())
    }

    /// A snapshot of the instance's figures (for `/metrics`).
    pub fn figures(&self) -> Figures {
        self.inner.counters.snapshot(&self.inner.instance)
    }

    /// Stops every background task of this instance (renewals, heartbeats, the subscriber, the
    /// reaper) without releasing or handing over anything, as a crash would; leases then expire
    /// and transfers are taken over. Tests use it to play a dead instance; a clean shutdown calls
    /// [`crate::TransferRegistry::hand_over_all`] first.
    pub fn halt(&self) {
        self.inner.halt.cancel();
    }

    /// True once [`Self::halt`] ran.
    pub fn is_halted(&self) -> bool {
        self.inner.halt.is_cancelled()
    }

    /// The deadline of one operation: a reconnect attempt plus the command itself.
    fn op_deadline(&self) -> Duration {
        let c = &self.inner.config;
        c.connect_timeout * 2 + c.response_timeout
    }

    fn outcome<T>(
        &self,
        result: Result<redis::RedisResult<T>, tokio::time::error::Elapsed>,
    ) -> Result<T> {
        let counters = &self.inner.counters;
        let result = match result {
            Ok(r) => r,
            Err(_) => Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "operation deadline passed",
            ))),
        };
        match result {
            Ok(value) => {
                counters.reachable.store(true, Ordering::Relaxed);
                Ok(value)
            }
            Err(err) => {
                if err.is_io_error()
                    || err.is_timeout()
                    || err.is_connection_dropped()
                    || err.is_unrecoverable_error()
                {
                    counters.reachable.store(false, Ordering::Relaxed);
                }
                counters.redis_errors.fetch_add(1, Ordering::Relaxed);
                Err(ClusterError::Unavailable(err))
            }
        }
    }

    /// Runs one command under the operation deadline.
    pub(crate) async fn query<T: FromRedisValue>(&self, cmd: &mut redis::Cmd) -> Result<T> {
        let mut conn = self.inner.conn.clone();
        let result = tokio::time::timeout(self.op_deadline(), cmd.query_async(&mut conn)).await;
        self.outcome(result)
    }

    /// Runs a pipeline under the operation deadline.
    pub(crate) async fn pipe<T: FromRedisValue>(&self, pipe: &Pipeline) -> Result<T> {
        let mut conn = self.inner.conn.clone();
        let result = tokio::time::timeout(self.op_deadline(), pipe.query_async(&mut conn)).await;
        self.outcome(result)
    }

    /// Runs a Lua script (EVALSHA, loading it on first use) under the operation deadline.
    pub(crate) async fn eval<T: FromRedisValue>(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&dyn ToRedisArgsDyn],
    ) -> Result<T> {
        let mut conn = self.inner.conn.clone();
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(arg.as_args());
        }
        let result =
            tokio::time::timeout(self.op_deadline(), invocation.invoke_async(&mut conn)).await;
        self.outcome(result)
    }

    /// `PUBLISH channel payload`.
    pub(crate) async fn publish(&self, channel: &str, payload: &str) -> Result<()> {
        let _: i64 = self
            .query(redis::cmd("PUBLISH").arg(channel).arg(payload))
            .await?;
        Ok(())
    }
}

/// Script arguments of mixed types, passed as their Redis encoding.
pub(crate) trait ToRedisArgsDyn: Sync {
    fn as_args(&self) -> Vec<Vec<u8>>;
}

impl<T: ToRedisArgs + Sync> ToRedisArgsDyn for T {
    fn as_args(&self) -> Vec<Vec<u8>> {
        self.to_redis_args()
    }
}
