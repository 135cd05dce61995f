//! Two (or more) instances on one real `redis-server`, with timings short enough for tests.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use ferry_cluster::{Cluster, ClusterConfig};
use ferry_testkit::redis::RedisServer;

pub const PREFIX: &str = "test:";

/// Short timings: lease 1 s renewed every 250 ms, lock wait 3 s, takeover 1.5 s.
pub fn config(redis: &RedisServer, name: &str) -> ClusterConfig {
    let mut config = ClusterConfig::new(redis.url());
    config.prefix = PREFIX.to_owned();
    config.instance_id = Some(name.to_owned());
    config.lock_ttl = Duration::from_secs(1);
    config.lock_renew = Duration::from_millis(250);
    config.lock_wait = Duration::from_secs(3);
    config.lock_poll = Duration::from_millis(100);
    config.transfer_takeover = Duration::from_millis(1500);
    config.response_timeout = Duration::from_millis(300);
    config.connect_timeout = Duration::from_millis(300);
    config
}

pub async fn instance(redis: &RedisServer, name: &str) -> Cluster {
    Cluster::connect(config(redis, name))
        .await
        .expect("connect to the test redis")
}

/// Polls `check` every 20 ms until it is true; panics after `within`.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < within {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: not within {within:?}");
}
