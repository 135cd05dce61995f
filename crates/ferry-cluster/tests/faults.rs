//! Redis faults: a killed subscriber connection, a pause longer than a lease, a restart, and
//! Redis missing at start.

mod common;

use std::time::{Duration, Instant};

use ferry_cluster::{Cluster, ClusterConfig, ClusterError};
use ferry_testkit::redis::RedisServer;

use common::{config, eventually, instance};

#[tokio::test]
async fn a_killed_subscriber_connection_resubscribes_and_catches_up_from_the_last_frame() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let mut on_b = b.progress().subscribe("tok").await.expect("subscribe");
    a.progress().publish("tok", "one").await.expect("publish");
    let first = tokio::time::timeout(Duration::from_secs(2), on_b.next()).await;
    assert_eq!(first.expect("in time").expect("open").expect("ok"), "one");
    let killed: u32 = redis
        .cli(&["CLIENT", "KILL", "TYPE", "pubsub"])
        .parse()
        .expect("count");
    assert!(killed >= 2, "both instances' subscribers ({killed})");
    // Published while the subscriber may still be reconnecting: lost on the channel, but kept.
    a.progress().publish("tok", "two").await.expect("publish");
    let second = tokio::time::timeout(Duration::from_secs(3), on_b.next()).await;
    assert_eq!(second.expect("in time").expect("open").expect("ok"), "two");
    eventually(Duration::from_secs(3), "reconnect counted", || {
        let b = b.clone();
        async move { b.figures().pubsub_reconnects >= 1 && b.figures().subscriber_connected }
    })
    .await;
    a.progress().publish("tok", "three").await.expect("publish");
    let third = tokio::time::timeout(Duration::from_secs(2), on_b.next()).await;
    assert_eq!(third.expect("in time").expect("open").expect("ok"), "three");
    // Release requests (on the instance channel) work again too.
    let held = b.locks().lock("u1").await.expect("lock");
    let stop = held.stop_signal().clone();
    let locks = a.locks();
    let waiter = tokio::spawn(async move { locks.lock("u1").await });
    tokio::time::timeout(Duration::from_secs(2), stop.cancelled())
        .await
        .expect("stop request");
    drop(held);
    waiter.await.expect("join").expect("taken");
}

#[tokio::test]
async fn a_pause_past_the_lease_makes_the_holder_stop_before_anyone_else_acquires() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("lock");
    let fence = held.fence();
    held.write_fenced(&[("tail", "a-1")], Duration::from_secs(60))
        .await
        .expect("write");
    let lost = held.lost_signal().clone();
    let lost_at = tokio::spawn(async move {
        lost.cancelled().await;
        Instant::now()
    });
    // Writes (the renew script included) stall for 2.5 s; the lease is 1 s.
    assert_eq!(redis.cli(&["CLIENT", "PAUSE", "2500", "WRITE"]), "OK");
    let paused = Instant::now();
    let contender = tokio::spawn(async move {
        loop {
            match b.locks().try_lock("u1").await {
                Ok(Some(lease)) => return (lease, Instant::now()),
                Ok(None) | Err(ClusterError::Unavailable(_)) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(other) => panic!("{other:?}"),
            }
        }
    });
    let lost_at = tokio::time::timeout(Duration::from_secs(2), lost_at)
        .await
        .expect("the holder learns within its lease")
        .expect("join");
    assert!(
        lost_at - paused < Duration::from_secs(1),
        "self-fenced after {:?}",
        lost_at - paused
    );
    assert!(!held.is_held());
    let (taken, taken_at) = tokio::time::timeout(Duration::from_secs(5), contender)
        .await
        .expect("acquired after the pause")
        .expect("join");
    assert!(
        lost_at < taken_at,
        "never two holders: A stopped before B acquired"
    );
    assert!(
        taken_at - paused >= Duration::from_secs(2),
        "not during the pause"
    );
    // Attempts that timed out during the pause still ran afterwards (and were cleaned up), so
    // the fence may have moved by more than one; it only ever grows.
    assert!(taken.fence() > fence, "{} > {fence}", taken.fence());
    // The fenced resource refuses the old holder and takes the new one.
    let err = held
        .write_fenced(&[("tail", "a-2")], Duration::from_secs(60))
        .await
        .expect_err("fenced");
    assert!(matches!(err, ClusterError::LeaseLost), "{err:?}");
    taken
        .write_fenced(&[("tail", "b-1")], Duration::from_secs(60))
        .await
        .expect("write");
    let record = a.locks().read_fenced("u1").await.expect("read");
    assert_eq!(record.get("tail").map(String::as_str), Some("b-1"));
    assert_eq!(record.get("fence"), Some(&taken.fence().to_string()));
    assert_eq!(a.figures().leases_lost, 1);
}

#[tokio::test]
async fn a_redis_restart_fails_operations_with_503_then_they_recover() {
    let mut redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let transfer = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    transfer
        .checkpoint(None, &[("offset", "7")])
        .await
        .expect("checkpoint");
    redis.stop();
    let started = Instant::now();
    let err = a.locks().lock("u1").await.expect_err("redis is down");
    assert!(err.is_unavailable(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the coordination store (Redis) is unavailable; try again shortly"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "failed fast: {:?}",
        started.elapsed()
    );
    assert!(a.ping().await.is_err());
    assert!(!a.figures().redis_reachable);
    assert!(b.progress().publish("tok", "x").await.is_err());
    redis.restart();
    eventually(Duration::from_secs(10), "commands work again", || {
        let a = a.clone();
        async move { a.ping().await.is_ok() }
    })
    .await;
    assert!(a.figures().redis_reachable);
    let lease = a.locks().lock("u1").await.expect("lock after the restart");
    assert_eq!(
        lease.fence(),
        1,
        "an empty Redis starts fences again (documented)"
    );
    // The owner put its lost record back (same epoch, cached offset) on its next beat.
    eventually(Duration::from_secs(3), "record restored", || {
        let b = b.clone();
        async move {
            b.transfers()
                .get("t1")
                .await
                .ok()
                .flatten()
                .is_some_and(|r| {
                    r.owner == "a"
                        && r.epoch == 1
                        && r.hints.get("offset").map(String::as_str) == Some("7")
                })
        }
    })
    .await;
    transfer
        .checkpoint(None, &[("offset", "8")])
        .await
        .expect("owner continues");
    // Pub/sub across instances works again.
    let mut on_b = b
        .progress()
        .subscribe("tok2")
        .await
        .expect("subscribe again");
    a.progress().publish("tok2", "back").await.expect("publish");
    let got = tokio::time::timeout(Duration::from_secs(2), on_b.next()).await;
    assert_eq!(got.expect("in time").expect("open").expect("ok"), "back");
}

#[tokio::test]
async fn redis_missing_at_start_is_a_clear_error_without_the_password() {
    let redis = RedisServer::start();
    let mut config: ClusterConfig = config(&redis, "a");
    let port = redis.port;
    drop(redis);
    config.url = format!("redis://:hunter2@127.0.0.1:{port}/");
    let err = Cluster::connect(config.clone())
        .await
        .expect_err("nothing listens");
    let text = err.to_string();
    assert!(matches!(err, ClusterError::Unreachable { .. }), "{err:?}");
    assert!(
        text.starts_with(&format!(
            "Redis at redis://:***@127.0.0.1:{port}/ is unreachable"
        )),
        "{text}"
    );
    assert!(!text.contains("hunter2") && !format!("{config:?}").contains("hunter2"));
    config.url = "http://127.0.0.1:6379/".to_owned();
    let err = Cluster::connect(config.clone())
        .await
        .expect_err("bad scheme");
    assert_eq!(
        err.to_string(),
        "invalid Redis URL http://127.0.0.1:6379/: the scheme must be redis:// or rediss://"
    );
    config.url = "redis://127.0.0.1:1/".to_owned();
    config.instance_id = Some("a/b".to_owned());
    assert!(matches!(
        Cluster::connect(config).await,
        Err(ClusterError::InvalidUrl { .. })
    ));
}
