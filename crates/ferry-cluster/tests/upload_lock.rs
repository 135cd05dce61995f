//! ferry-tus's `UploadLock` contract on Redis leases, across two instances.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_cluster::RedisUploadLocks;
use ferry_testkit::redis::RedisServer;
use ferry_tus::id::UploadId;
use ferry_tus::lock::{LockError, UploadLock};

use common::instance;

#[tokio::test]
async fn a_newer_request_on_another_instance_stops_the_holder_and_gets_the_lock() {
    let mut redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let on_a: Arc<dyn UploadLock> = Arc::new(RedisUploadLocks::new(&a));
    let on_b: Arc<dyn UploadLock> = Arc::new(RedisUploadLocks::new(&b));
    let id = UploadId::generate();
    let first = on_a.acquire(&id).await.expect("acquire on a");
    assert!(on_b.try_acquire(&id).await.expect("try").is_none(), "held");
    let stop = first.stop_signal();
    let holder = tokio::spawn(async move {
        stop.cancelled().await;
        drop(first); // the request ends and lets go
    });
    let started = Instant::now();
    let second = on_b.acquire(&id).await.expect("acquire on b");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    holder.await.expect("join");
    assert!(!second.stop_signal().is_cancelled());
    assert_eq!(
        b.locks()
            .holder(&RedisUploadLocks::resource(&id))
            .await
            .expect("holder")
            .map(|h| h.instance),
        Some("b".to_owned())
    );
    // Another upload is independent.
    let other = on_a.try_acquire(&UploadId::generate()).await.expect("try");
    assert!(other.is_some());
    // Redis gone: the handler gets Unavailable (it answers 503).
    redis.stop();
    let err = on_a.acquire(&UploadId::generate()).await.expect_err("down");
    assert!(matches!(err, LockError::Unavailable(_)));
}
