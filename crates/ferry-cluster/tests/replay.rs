//! Progress frames and auth hand-off across instances, with replay of the last message.

mod common;

use std::time::Duration;

use ferry_testkit::redis::RedisServer;

use common::{PREFIX, instance};

async fn next(stream: &mut ferry_cluster::TopicStream) -> String {
    tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("a message in time")
        .expect("stream open")
        .expect("no error")
}

#[tokio::test]
async fn progress_frames_cross_instances_and_a_late_socket_gets_the_last_one() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let mut on_b = b.progress().subscribe("tok").await.expect("subscribe");
    a.progress()
        .publish("tok", r#"{"action":"progress","n":1}"#)
        .await
        .expect("publish");
    a.progress()
        .publish("tok", r#"{"action":"progress","n":2}"#)
        .await
        .expect("publish");
    assert_eq!(next(&mut on_b).await, r#"{"action":"progress","n":1}"#);
    assert_eq!(next(&mut on_b).await, r#"{"action":"progress","n":2}"#);
    // A socket connecting later (here on the publisher's instance) starts with the last frame.
    let mut late = a.progress().subscribe("tok").await.expect("subscribe");
    assert_eq!(next(&mut late).await, r#"{"action":"progress","n":2}"#);
    a.progress()
        .publish("tok", r#"{"action":"success"}"#)
        .await
        .expect("publish");
    assert_eq!(
        next(&mut late).await,
        r#"{"action":"success"}"#,
        "no repeat of n=2"
    );
    assert_eq!(next(&mut on_b).await, r#"{"action":"success"}"#);
    assert_eq!(
        b.progress().last("tok").await.expect("last").as_deref(),
        Some(r#"{"action":"success"}"#)
    );
    let ttl: i64 = redis
        .cli(&["TTL", &format!("{PREFIX}{{ev:tok}}:last")])
        .parse()
        .expect("ttl");
    assert!((590..=600).contains(&ttl), "kept 10 minutes, ttl {ttl}");
    // Other tokens are not mixed in.
    a.progress().publish("other", "x").await.expect("publish");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), on_b.next())
            .await
            .is_err()
    );
    b.progress().clear("tok").await.expect("clear");
    assert_eq!(b.progress().last("tok").await.expect("last"), None);
}

#[tokio::test]
async fn an_auth_token_reaches_a_socket_on_another_instance_even_when_it_connects_late() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let mut early = b.auth_handoff().subscribe("cb1").await.expect("subscribe");
    a.auth_handoff()
        .publish("cb1", "sealed-token")
        .await
        .expect("publish");
    assert_eq!(next(&mut early).await, "sealed-token");
    let mut late = b.auth_handoff().subscribe("cb1").await.expect("subscribe");
    assert_eq!(next(&mut late).await, "sealed-token");
    let ttl: i64 = redis
        .cli(&["TTL", &format!("{PREFIX}{{auth:cb1}}:last")])
        .parse()
        .expect("ttl");
    assert!((50..=60).contains(&ttl), "kept a minute, ttl {ttl}");
    // Progress and auth are separate families.
    assert_eq!(a.progress().last("cb1").await.expect("last"), None);
}

#[tokio::test]
async fn oauth_state_is_taken_once_on_any_instance() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    a.oauth_states()
        .put("s1", "grant", Duration::from_secs(600))
        .await
        .expect("put");
    assert_eq!(
        b.oauth_states().take("s1").await.expect("take").as_deref(),
        Some("grant")
    );
    assert_eq!(a.oauth_states().take("s1").await.expect("take"), None);
}

#[tokio::test]
async fn every_key_is_under_the_prefix_and_expires() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let lease = a.locks().lock("u1").await.expect("lock");
    lease
        .write_fenced(&[("tail", "k")], Duration::from_secs(60))
        .await
        .expect("write");
    let _waiter = tokio::spawn({
        let locks = b.locks();
        async move { locks.lock("u1").await }
    });
    let transfer = a
        .transfers()
        .register("t1", "req", "running")
        .await
        .expect("register");
    transfer
        .checkpoint(Some("running"), &[("offset", "1")])
        .await
        .expect("checkpoint");
    a.progress().publish("t1", "frame").await.expect("publish");
    a.auth_handoff()
        .publish("cb", "tok")
        .await
        .expect("publish");
    a.oauth_states()
        .put("s", "v", Duration::from_secs(60))
        .await
        .expect("put");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let keys = redis.cli(&["--scan"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert!(keys.len() >= 10, "keys: {keys:?}");
    for key in keys {
        assert!(key.starts_with(PREFIX), "{key} outside the prefix");
        let ttl: i64 = redis.cli(&["PTTL", key]).parse().expect("pttl");
        assert!(ttl > 0, "{key} has no expiry ({ttl})");
    }
}
