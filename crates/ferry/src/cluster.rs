//! `--redis-url` and friends: joining several `ferry` instances through Redis. With a URL, the
//! binary connects at start (an unreachable Redis stops it with a message naming the URL without
//! its password), the tus endpoint takes its upload lock from Redis leases, the companion keeps
//! its transfers and logins in Redis ([`RedisRegistry`], [`RedisHandoff`]) so any instance can
//! watch, steer and take over a transfer, `/health` reports whether Redis answers and `/metrics`
//! ([`crate::metrics`]) gains the instance's coordination figures. The adapters are
//! ferry-cluster's; this module only parses the options and plugs them in. Without a URL, nothing
//! here runs and everything stays in process.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clap::Args;
use ferry_auth::Secret;
use ferry_cluster::{Cluster, ClusterConfig, RedisHandoff, RedisRegistry, RedisUploadLocks};
use ferry_companion::{AppState, CompanionConfig};
use ferry_tus::lock::UploadLock;

/// Options for running several instances on one Redis (or Valkey).
#[derive(Clone, Debug, Args)]
pub struct ClusterArgs {
    /// Redis (or Valkey) shared by several instances, `redis://[:password@]host:port[/db]` or
    /// `rediss://...`; unset: one instance, everything in process. Never logged.
    #[arg(
        long = "redis-url",
        env = "FERRY_REDIS_URL",
        hide_env_values = true,
        value_parser = crate::config::secret
    )]
    pub redis_url: Option<Secret>,

    /// Prefix of every Redis key and channel, so several fleets can share one Redis.
    #[arg(long = "redis-prefix", env = "FERRY_REDIS_PREFIX", default_value = ClusterArgs::DEFAULT_PREFIX)]
    pub redis_prefix: String,

    /// Seconds of silence after which another instance claims a transfer whose instance died
    /// and resumes it from what its destination holds (a SIGTERM'd instance hands its
    /// transfers over at once instead).
    #[arg(
        long = "transfer-takeover",
        env = "FERRY_TRANSFER_TAKEOVER",
        default_value_t = ClusterArgs::DEFAULT_TAKEOVER,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub transfer_takeover: u64,
}

impl Default for ClusterArgs {
    fn default() -> Self {
        Self {
            redis_url: None,
            redis_prefix: Self::DEFAULT_PREFIX.to_owned(),
            transfer_takeover: Self::DEFAULT_TAKEOVER,
        }
    }
}

impl ClusterArgs {
    /// `--redis-prefix`'s default.
    const DEFAULT_PREFIX: &str = "ferry:";
    /// `--transfer-takeover`'s default, in seconds.
    const DEFAULT_TAKEOVER: u64 = 30;

    /// The cluster settings, or `None` without `--redis-url`.
    pub fn to_config(&self) -> Option<ClusterConfig> {
        let url = self.redis_url.as_ref()?;
        let mut config = ClusterConfig::new(url.expose());
        config.prefix.clone_from(&self.redis_prefix);
        config.transfer_takeover = Duration::from_secs(self.transfer_takeover);
        Some(config)
    }

    /// Connects when `--redis-url` is set. The error names the URL without its password.
    pub async fn connect(&self) -> std::io::Result<Option<Cluster>> {
        let Some(config) = self.to_config() else {
            return Ok(None);
        };
        let cluster = Cluster::connect(config)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        tracing::info!(
            instance = cluster.instance_id(),
            "joined the cluster on Redis"
        );
        Ok(Some(cluster))
    }
}

/// This instance's part in the fleet: the companion's shared transfer registry and login
/// hand-off, and the reaper that takes over transfers of departed instances.
#[derive(Debug)]
pub struct Fleet {
    cluster: Cluster,
    registry: RedisRegistry,
    takeovers: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How long a shutting-down instance waits for its transfers to stop and hand over.
const HAND_OVER_WITHIN: Duration = Duration::from_secs(10);

impl Fleet {
    /// The fleet parts over `cluster`; finished transfers stay readable `keep`.
    pub fn new(cluster: &Cluster, keep: Duration) -> Self {
        Self {
            cluster: cluster.clone(),
            registry: RedisRegistry::new(cluster, keep),
            takeovers: std::sync::Mutex::default(),
        }
    }

    /// Puts the shared registry and hand-off into the companion's settings.
    pub fn join(&self, companion: &mut CompanionConfig) {
        companion.registry = Arc::new(self.registry.clone());
        companion.handoff = Arc::new(RedisHandoff::new(&self.cluster));
    }

    /// Starts taking over transfers of silent instances, resuming them on `state`.
    pub fn start_takeovers(&self, state: AppState) {
        let window = self.cluster.config().transfer_takeover;
        // A claim needs the window of silence anyway; looking 4 times per window keeps the
        // takeover within 1.25 windows without polling Redis hard.
        let every = (window / 4).clamp(Duration::from_millis(250), Duration::from_secs(5));
        let handle = self.registry.spawn_takeovers(state, every);
        *self.takeovers.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// At shutdown: stops claiming, then has every transfer running here stop and hand over, so
    /// another instance resumes it at once rather than after the takeover window.
    pub async fn hand_over(&self) {
        let reaper = self
            .takeovers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(reaper) = reaper {
            reaper.abort();
            // Awaited, so its claim channel is closed before the hand-over wakes the reapers.
            let _ = reaper.await;
        }
        match self.cluster.transfers().drain(HAND_OVER_WITHIN).await {
            Ok(0) => {}
            Ok(forced) => tracing::warn!(forced, "transfers handed over without their checkpoint"),
            Err(error) => tracing::warn!(%error, "transfers not handed over: redis unavailable"),
        }
    }
}

/// The tus upload lock: Redis leases with a cluster, `None` (the in-process default) without.
pub fn upload_lock(cluster: Option<&Cluster>) -> Option<Arc<dyn UploadLock>> {
    cluster.map(|c| Arc::new(RedisUploadLocks::new(c)) as Arc<dyn UploadLock>)
}

/// `GET /health`: `200 ok` alone, or with a cluster `200 ok` while Redis answers a `PING` and
/// `503` with a message while it does not.
#[utoipa::path(
    get,
    path = "/health",
    tag = "server",
    description = "Liveness; with `--redis-url`, whether Redis answers.",
    responses(
        (status = 200, description = "`ok`.", body = String, content_type = "text/plain"),
        (status = 503, description = "Redis is unreachable.", body = String, content_type = "text/plain"),
    ),
)]
pub async fn health(State(cluster): State<Option<Cluster>>) -> Response {
    let Some(cluster) = cluster else {
        return (StatusCode::OK, "ok\n").into_response();
    };
    match cluster.ping().await {
        Ok(_) => (StatusCode::OK, "ok\n").into_response(),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "redis unreachable: this instance cannot coordinate with the others\n",
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::{Cli, Command};

    fn parse(args: &[&str]) -> ClusterArgs {
        let cli = Cli::try_parse_from([&["ferry", "serve"], args].concat()).expect("flags");
        let Command::Serve(config) = cli.command;
        config.cluster
    }

    #[test]
    fn without_a_url_there_is_no_cluster() {
        let args = parse(&[]);
        assert!(args.to_config().is_none());
        assert_eq!(args.redis_prefix, ClusterArgs::default().redis_prefix);
        assert_eq!(
            args.transfer_takeover,
            ClusterArgs::default().transfer_takeover
        );
    }

    #[test]
    fn flags_reach_the_cluster_config_and_the_password_stays_hidden() {
        let args = parse(&[
            "--redis-url",
            "redis://:hunter2@127.0.0.1:6379/2",
            "--redis-prefix",
            "fleet-a:",
            "--transfer-takeover",
            "12",
        ]);
        let config = args.to_config().expect("configured");
        assert_eq!(config.url, "redis://:hunter2@127.0.0.1:6379/2");
        assert_eq!(config.prefix, "fleet-a:");
        assert_eq!(config.transfer_takeover, Duration::from_secs(12));
        assert!(!format!("{args:?}{config:?}").contains("hunter2"));
        let zero = Cli::try_parse_from(["ferry", "serve", "--transfer-takeover", "0"]);
        assert!(zero.is_err());
    }
}
