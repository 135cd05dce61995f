//! The fleet's Assembly caps on a real redis-server, from two instances (takeover 1.5 s, so a
//! count's lease is 3 s): admissions racing from both never pass the cap, a released or lapsed
//! count frees its place, a renewed one keeps it, the window is shared, and the disk tally
//! counts an Assembly reported by both instances once.

mod common;

use std::time::{Duration, Instant};

use ferry_cluster::RedisCaps;
use ferry_process::Quotas;
use ferry_process::id::Id;
use ferry_process::upkeep::shared::{Held, Refusal, SharedCaps};
use ferry_testkit::redis::RedisServer;

use common::instance;

fn quotas(max_active: usize, max_per_window: u32) -> Quotas {
    Quotas {
        max_active_per_client: max_active,
        max_per_window,
        window: Duration::from_secs(600),
        ..Quotas::DEFAULT
    }
}

#[tokio::test]
async fn admissions_from_two_instances_never_pass_the_cap() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let (a, b) = (RedisCaps::new(&a), RedisCaps::new(&b));
    let q = quotas(3, 0);
    let ids: Vec<Id> = (0..12).map(|_| Id::random()).collect();
    let tries = ids.iter().enumerate().map(|(i, id)| {
        let caps = if i % 2 == 0 { &a } else { &b };
        let q = &q;
        async move { caps.admit("k@1.2.3.4", id, q).await.expect("redis") }
    });
    let answers = futures_util::future::join_all(tries).await;
    let admitted: Vec<&Id> = ids
        .iter()
        .zip(&answers)
        .filter(|(_, r)| r.is_ok())
        .map(|(id, _)| id)
        .collect();
    assert_eq!(admitted.len(), 3, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|r| matches!(r, Ok(()) | Err(Refusal::Active(3)))),
        "{answers:?}"
    );
    // Another client is counted apart; the same Assembly admitted again takes no new place.
    assert_eq!(
        a.admit("k@5.6.7.8", &Id::random(), &q)
            .await
            .expect("redis"),
        Ok(())
    );
    assert_eq!(
        b.admit("k@1.2.3.4", admitted[0], &q).await.expect("redis"),
        Ok(())
    );

    // Released on B, the place is free on A.
    let first = Held {
        client: "k@1.2.3.4".to_owned(),
        id: admitted[0].clone(),
    };
    b.release(std::slice::from_ref(&first))
        .await
        .expect("release");
    let next = Id::random();
    assert_eq!(
        a.admit("k@1.2.3.4", &next, &q).await.expect("redis"),
        Ok(())
    );
    assert_eq!(
        b.admit("k@1.2.3.4", &Id::random(), &q)
            .await
            .expect("redis"),
        Err(Refusal::Active(3))
    );

    // Renewed by B, `next` keeps its place; the others, never renewed, lapse with their lease.
    let kept = Held {
        client: "k@1.2.3.4".to_owned(),
        id: next,
    };
    let started = Instant::now();
    let mut admitted_again = 0;
    while started.elapsed() < Duration::from_secs(10) && admitted_again < 2 {
        b.renew(std::slice::from_ref(&kept)).await.expect("renew");
        if a.admit("k@1.2.3.4", &Id::random(), &q)
            .await
            .expect("redis")
            == Ok(())
        {
            admitted_again += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        admitted_again, 2,
        "the lapsed counts did not free their places"
    );
    assert_eq!(
        a.admit("k@1.2.3.4", &Id::random(), &q)
            .await
            .expect("redis"),
        Err(Refusal::Active(3)),
        "the renewed count lapsed"
    );
}

#[tokio::test]
async fn the_window_is_shared_and_the_disk_tally_counts_each_assembly_once() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let (a, b) = (RedisCaps::new(&a), RedisCaps::new(&b));
    let q = quotas(0, 2);
    assert_eq!(
        a.admit("k@1.2.3.4", &Id::random(), &q)
            .await
            .expect("redis"),
        Ok(())
    );
    assert_eq!(
        b.admit("k@1.2.3.4", &Id::random(), &q)
            .await
            .expect("redis"),
        Ok(())
    );
    match a
        .admit("k@1.2.3.4", &Id::random(), &q)
        .await
        .expect("redis")
    {
        Err(Refusal::Window(ms)) => assert!((590_000..=600_000).contains(&ms), "{ms}"),
        other => panic!("not refused by the window: {other:?}"),
    }

    let keep = Duration::from_secs(60);
    let (x, y) = (Id::random(), Id::random());
    assert_eq!(
        a.set_bytes(&[(x.clone(), 100)], keep).await.expect("set"),
        100
    );
    assert_eq!(
        b.set_bytes(&[(x.clone(), 100)], keep).await.expect("set"),
        100
    );
    assert_eq!(
        b.set_bytes(&[(y, 50), (x.clone(), 70)], keep)
            .await
            .expect("set"),
        120
    );
    assert_eq!(a.set_bytes(&[(x, 0)], keep).await.expect("set"), 50);
    assert_eq!(b.total_bytes().await.expect("total"), 50);
}
