//! The transfer registry across instances on a real redis-server (takeover 1.5 s).

mod common;

use std::time::{Duration, Instant};

use ferry_cluster::{Claimed, ClusterError, Control, Desired, OwnedTransfer};
use ferry_testkit::redis::RedisServer;

use common::instance;

fn owned(claimed: Vec<Claimed>) -> Vec<OwnedTransfer> {
    claimed
        .into_iter()
        .map(|c| match c {
            Claimed::Owned(t) => t,
            Claimed::Failed(r) => panic!("unexpected failure of {}", r.token),
        })
        .collect()
}

#[tokio::test]
async fn a_silent_owners_transfer_is_claimed_after_the_takeover_window_with_a_new_epoch() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let transfer = a
        .transfers()
        .register("t1", r#"{"url":"http://o/f"}"#, "running")
        .await
        .expect("register");
    assert_eq!(transfer.epoch(), 1);
    transfer
        .checkpoint(None, &[("offset", "4096")])
        .await
        .expect("checkpoint");
    a.halt(); // the instance dies: no more heartbeats
    let died = Instant::now();
    assert!(
        owned(b.transfers().claim_stale(10).await.expect("claim")).is_empty(),
        "too early"
    );
    let mut claimed = Vec::new();
    while claimed.is_empty() {
        assert!(died.elapsed() < Duration::from_secs(4), "never claimed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        claimed = owned(b.transfers().claim_stale(10).await.expect("claim"));
    }
    assert!(
        died.elapsed() >= Duration::from_millis(1400),
        "claimed after {:?}",
        died.elapsed()
    );
    let taken = claimed.pop().expect("one");
    assert_eq!(taken.epoch(), 2);
    assert_eq!(taken.record().request, r#"{"url":"http://o/f"}"#);
    assert_eq!(
        taken.record().hints.get("offset").map(String::as_str),
        Some("4096")
    );
    assert_eq!(taken.record().attempts, 2);
    assert_eq!(b.figures().takeovers, 1);
    let record = b.transfers().get("t1").await.expect("get").expect("exists");
    assert_eq!((record.owner.as_str(), record.epoch), ("b", 2));
    // The zombie's writes are refused and it learns it lost the transfer.
    let err = transfer
        .checkpoint(None, &[("offset", "9999")])
        .await
        .expect_err("fenced");
    assert!(matches!(err, ClusterError::LeaseLost), "{err:?}");
    assert!(transfer.lost_signal().is_cancelled());
    let record = b.transfers().get("t1").await.expect("get").expect("exists");
    assert_eq!(record.hints.get("offset").map(String::as_str), Some("4096"));
}

#[tokio::test]
async fn a_live_owner_keeps_its_transfer() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let transfer = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    tokio::time::sleep(Duration::from_secs(3)).await; // two takeover windows
    assert!(owned(b.transfers().claim_stale(10).await.expect("claim")).is_empty());
    let record = b.transfers().get("t1").await.expect("get").expect("exists");
    assert_eq!((record.owner.as_str(), record.epoch), ("a", 1));
    assert!(!transfer.lost_signal().is_cancelled());
    assert_eq!(a.figures().transfers_owned, 1);
}

#[tokio::test]
async fn shutdown_hands_transfers_over_at_once() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let mut reaper = b
        .transfers()
        .spawn_reaper(Duration::from_secs(60), 4)
        .await
        .expect("reaper");
    let transfer = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    // The running transfer: on drain it saves its offset and hands over.
    let worker = tokio::spawn(async move {
        transfer.drain_signal().cancelled().await;
        transfer.hand_over(&[("offset", "42")]).await
    });
    let started = Instant::now();
    assert_eq!(
        a.transfers()
            .drain(Duration::from_secs(2))
            .await
            .expect("drain"),
        0,
        "none forced"
    );
    worker.await.expect("join").expect("hand over");
    // The reaper's round is 60 s: a claim well before that came from the hand-over's wake.
    let claimed = tokio::time::timeout(Duration::from_secs(20), reaper.recv())
        .await
        .expect("claimed without waiting for the takeover window")
        .expect("reaper alive");
    let Claimed::Owned(taken) = claimed else {
        panic!("failed")
    };
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        (
            taken.epoch(),
            taken.record().hints.get("offset").map(String::as_str)
        ),
        (2, Some("42"))
    );
    assert_eq!(a.figures().handovers, 1);
    assert_eq!(a.figures().transfers_owned, 0);
}

#[tokio::test]
async fn a_stopped_reaper_does_not_claim_back_what_its_instance_hands_over() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    // A long round: only the hand-over's wake makes either reaper look.
    let a_reaper = a
        .transfers()
        .spawn_reaper(Duration::from_secs(60), 4)
        .await
        .expect("reaper");
    let mut b_reaper = b
        .transfers()
        .spawn_reaper(Duration::from_secs(60), 4)
        .await
        .expect("reaper");
    let transfer = a
        .transfers()
        .register("t-back", "req", "running")
        .await
        .expect("register");
    // A shuts down: it stops taking transfers first, then hands its own over (which wakes
    // every reaper, A's included).
    drop(a_reaper);
    transfer.hand_over(&[]).await.expect("hand over");
    let claimed = tokio::time::timeout(Duration::from_secs(2), b_reaper.recv())
        .await
        .expect("B claims it at once")
        .expect("reaper alive");
    let Claimed::Owned(taken) = claimed else {
        panic!("failed")
    };
    assert_eq!(taken.epoch(), 2, "claimed once, by B");
    let record = b
        .transfers()
        .get("t-back")
        .await
        .expect("get")
        .expect("record");
    assert_eq!(record.owner, b.instance_id());
    assert_eq!(record.attempts, 2);
}

#[tokio::test]
async fn drain_hands_over_what_its_owner_did_not() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let _stuck = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    let forced = a
        .transfers()
        .drain(Duration::from_millis(200))
        .await
        .expect("drain");
    assert_eq!(forced, 1);
    let taken = owned(b.transfers().claim_stale(10).await.expect("claim"));
    assert_eq!(taken.len(), 1, "claimable at once");
}

#[tokio::test]
async fn controls_reach_the_owner_from_any_instance() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let transfer = a
        .transfers()
        .register("t1", "req", "waiting_socket")
        .await
        .expect("register");
    let mut directives = transfer.directives();
    assert!(!directives.borrow().socket_seen);
    for (control, check) in [
        (
            Control::SocketConnected,
            Box::new(|d: &ferry_cluster::Directives| d.socket_seen) as Box<dyn Fn(&_) -> bool>,
        ),
        (
            Control::Pause,
            Box::new(|d: &ferry_cluster::Directives| d.desired == Desired::Pause),
        ),
        (
            Control::Resume,
            Box::new(|d: &ferry_cluster::Directives| d.desired == Desired::Run),
        ),
        (
            Control::Cancel,
            Box::new(|d: &ferry_cluster::Directives| d.desired == Desired::Cancel),
        ),
    ] {
        assert!(b.transfers().control("t1", control).await.expect("control"));
        // Well inside the 250 ms heartbeat: the pub/sub message wakes the owner.
        tokio::time::timeout(
            Duration::from_millis(200),
            directives.wait_for(|d| check(d)),
        )
        .await
        .unwrap_or_else(|_| panic!("{control:?} did not arrive"))
        .expect("watch");
    }
    assert!(
        !b.transfers()
            .control("nope", Control::Cancel)
            .await
            .expect("control")
    );
}

#[tokio::test]
async fn cancel_while_the_owner_is_dead_is_honoured_by_the_next_owner() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let transfer = a
        .transfers()
        .register("t1", "req", "paused")
        .await
        .expect("register");
    assert!(
        b.transfers()
            .control("t1", Control::Pause)
            .await
            .expect("pause")
    );
    transfer.forget();
    assert!(
        b.transfers()
            .control("t1", Control::Cancel)
            .await
            .expect("cancel")
    );
    let mut claimed = Vec::new();
    let started = Instant::now();
    while claimed.is_empty() {
        assert!(started.elapsed() < Duration::from_secs(4), "never claimed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        claimed = owned(b.transfers().claim_stale(10).await.expect("claim"));
    }
    let taken = claimed.pop().expect("one");
    assert_eq!(taken.record().desired, Desired::Cancel);
    assert_eq!(taken.directives().borrow().desired, Desired::Cancel);
    taken
        .finish("canceled", &[], Duration::from_secs(600))
        .await
        .expect("finish");
    let record = b.transfers().get("t1").await.expect("get").expect("kept");
    assert_eq!(
        (record.state.as_str(), record.owner.as_str()),
        ("canceled", "")
    );
    assert_eq!(redis.cli(&["XLEN", "test:xfer:q"]), "0", "entry removed");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert!(owned(b.transfers().claim_stale(10).await.expect("claim")).is_empty());
}

#[tokio::test]
async fn a_transfer_taken_over_too_often_fails() {
    let redis = RedisServer::start();
    let a = instance(&redis, "a").await;
    a.transfers()
        .register("t1", "req", "running")
        .await
        .expect("register")
        .forget();
    let mut outcome = None;
    for _ in 0..ferry_cluster::transfers::MAX_ATTEMPTS {
        tokio::time::sleep(Duration::from_millis(1550)).await;
        // Each claimer dies at once too.
        for claimed in a.transfers().claim_stale(10).await.expect("claim") {
            match claimed {
                Claimed::Owned(t) => t.forget(),
                Claimed::Failed(record) => outcome = Some(record),
            }
        }
        if outcome.is_some() {
            break;
        }
    }
    let record = outcome.expect("failed after the attempts");
    assert_eq!(record.state, "failed");
    assert_eq!(record.last_error.as_deref(), Some("taken over too often"));
    assert_eq!(redis.cli(&["XLEN", "test:xfer:q"]), "0");
}

#[tokio::test]
async fn a_token_registers_once() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let _first = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    let err = b
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect_err("exists");
    assert!(matches!(err, ClusterError::AlreadyRegistered), "{err:?}");
}
