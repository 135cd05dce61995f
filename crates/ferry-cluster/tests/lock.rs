//! Lease locks across two instances on a real redis-server.

mod common;

use std::time::{Duration, Instant};

use ferry_cluster::{ClusterError, Holder};
use ferry_testkit::redis::RedisServer;

use common::instance;

#[tokio::test]
async fn one_holder_at_a_time_and_fences_grow() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let first = a.locks().lock("u1").await.expect("a locks");
    assert!(first.is_held());
    assert!(b.locks().try_lock("u1").await.expect("try").is_none());
    assert_eq!(
        b.locks().holder("u1").await.expect("holder"),
        Some(Holder {
            instance: "a".into(),
            fence: first.fence()
        })
    );
    // Another resource is independent.
    let other = b.locks().try_lock("u2").await.expect("try").expect("free");
    assert!(first.release().await.expect("release"), "it was still ours");
    let second = b
        .locks()
        .try_lock("u1")
        .await
        .expect("try")
        .expect("free now");
    assert_eq!(second.fence(), 2);
    assert_eq!(other.fence(), 1, "fences count per resource");
    assert_eq!(a.figures().leases_held, 0);
    assert_eq!(b.figures().leases_held, 2);
}

#[tokio::test]
async fn a_request_on_another_instance_stops_the_holder_and_takes_over() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("a locks");
    let fence = held.fence();
    // The holder plays a PATCH: it writes its tail pointer until told to stop, then saves and
    // releases.
    let holder = tokio::spawn(async move {
        held.stop_signal().cancelled().await;
        assert!(
            !held.lost_signal().is_cancelled(),
            "asked to stop, not lost"
        );
        held.write_fenced(&[("tail", "saved")], Duration::from_secs(60))
            .await
            .expect("still the holder while saving");
        held.release().await.expect("release")
    });
    let started = Instant::now();
    let taken = b.locks().lock("u1").await.expect("b takes the lock");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        holder.await.expect("join"),
        "the holder released its own lease"
    );
    assert_eq!(taken.fence(), fence + 1);
    assert_eq!(a.figures().release_requests_received, 1);
    assert!(b.figures().release_requests_sent >= 1);
    let fenced = b.locks().read_fenced("u1").await.expect("read");
    assert_eq!(fenced.get("tail").map(String::as_str), Some("saved"));
    assert_eq!(fenced.get("fence"), Some(&fence.to_string()));
}

#[tokio::test]
async fn a_request_on_the_same_instance_stops_the_holder_without_redis_pubsub() {
    let redis = RedisServer::start();
    let a = instance(&redis, "a").await;
    let held = a.locks().lock("u1").await.expect("lock");
    let stop = held.stop_signal().clone();
    let locks = a.locks();
    let waiter = tokio::spawn(async move { locks.lock("u1").await });
    tokio::time::timeout(Duration::from_secs(10), stop.cancelled())
        .await
        .expect("the holder is told to stop");
    drop(held); // released in the background, as a finished request does
    let second = waiter.await.expect("join").expect("second request gets it");
    assert_eq!(second.fence(), 2);
    assert_eq!(a.figures().release_requests_sent, 0);
}

#[tokio::test]
async fn a_holder_that_does_not_stop_keeps_the_lock_and_the_waiter_gets_busy() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("lock");
    let started = Instant::now();
    let err = b.locks().lock("u1").await.expect_err("busy");
    assert!(matches!(err, ClusterError::LockBusy), "{err:?}");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "waited lock_wait"
    );
    assert!(
        held.stop_signal().is_cancelled() && held.is_held(),
        "asked, yet still held"
    );
}

#[tokio::test]
async fn a_newer_request_ends_an_older_waiter() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("lock");
    let locks = b.locks();
    let older = tokio::spawn(async move { locks.lock("u1").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let locks = b.locks();
    let newer = tokio::spawn(async move { locks.lock("u1").await });
    let older = older.await.expect("join").expect_err("superseded");
    assert!(matches!(older, ClusterError::Superseded), "{older:?}");
    held.release().await.expect("release");
    let newer = newer
        .await
        .expect("join")
        .expect("the newest request gets it");
    assert_eq!(newer.fence(), 2);
}

#[tokio::test]
async fn renewal_keeps_the_lease_past_its_ttl() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("lock");
    tokio::time::sleep(Duration::from_secs(3)).await; // three TTLs
    assert!(held.is_held());
    assert!(b.locks().try_lock("u1").await.expect("try").is_none());
    let ttl: i64 = redis
        .cli(&["PTTL", "test:{lk:u1}:lock"])
        .parse()
        .expect("pttl");
    assert!(ttl > 0 && ttl <= 1000, "lease key ttl {ttl}");
}

#[tokio::test]
async fn a_dead_holders_lease_expires_and_the_next_grant_is_fenced_higher() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let held = a.locks().lock("u1").await.expect("lock");
    let fence = held.fence();
    let died = Instant::now();
    held.forget(); // no renewals, no release: what a kill -9 leaves
    assert!(b.locks().try_lock("u1").await.expect("try").is_none());
    let started = Instant::now();
    let taken = loop {
        if let Some(lease) = b.locks().try_lock("u1").await.expect("try") {
            break lease;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "lease never expired"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        died.elapsed() >= Duration::from_millis(900),
        "not before the TTL"
    );
    assert_eq!(taken.fence(), fence + 1);
}

#[tokio::test]
async fn fences_keep_growing_after_the_counter_expired_while_the_fenced_record_lives() {
    let redis = RedisServer::start();
    let a = instance(&redis, "a").await;
    for _ in 0..3 {
        a.locks()
            .lock("u1")
            .await
            .expect("lock")
            .release()
            .await
            .expect("release");
    }
    let held = a.locks().lock("u1").await.expect("lock");
    held.write_fenced(&[("tail", "x")], Duration::from_secs(60))
        .await
        .expect("write");
    held.release().await.expect("release");
    redis.cli(&["DEL", "test:{lk:u1}:fence"]);
    let next = a.locks().lock("u1").await.expect("lock");
    assert_eq!(next.fence(), 5, "re-seeded from the fenced record");
}
