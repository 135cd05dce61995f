//! Link imports across `ferry` instances on one Redis: the transfer runs on the instance that
//! got `/url/get`, its progress socket is on another; pause and resume from that other
//! instance; `kill -9` of the running instance mid-transfer and another instance takes over,
//! resuming from the destination's offset (the origin serves the file about once, not twice);
//! SIGTERM hands a transfer over at once (long before the takeover window); a cancel sent while
//! the owner is dead is honoured by the instance that claims it. The destination is a separate
//! `ferry` (its tus endpoint on disk), the origin a slow loopback server; bytes compared by
//! sha256. An Unsplash import (no sign-in token) is taken over the same way.

mod fleet;

use std::time::{Duration, Instant};

use ferry_testkit::sha256_hex;
use fleet::*;
use serde_json::{Value, json};

#[tokio::test]
async fn a_transfer_survives_the_kill_of_its_instance() {
    let mut fleet = fleet().await;
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let token = fleet.start_import(&a).await;
    // The socket is on B from the start: frames come from A through Redis.
    let mut ws = socket(&b, &token).await;
    let at = until_progress(&mut ws, 40.0).await;
    assert!(at > 0);
    assert!(
        fleet
            .record(&token, "h.upload_url")
            .starts_with(&fleet.dest.base),
        "the tus upload URL was checkpointed"
    );
    a.kill9();
    let killed = Instant::now();
    let url = until_success(&mut ws, Duration::from_secs(60)).await;
    let took = killed.elapsed();
    fleet.assert_stored(&url).await;
    // B resumed at the destination's offset: a ranged GET, and the file served about once.
    let ranges = fleet.origin.ranges();
    assert!(
        ranges
            .iter()
            .any(|r| r.starts_with("bytes=") && r != "bytes=0-"),
        "no resumed GET: {ranges:?}"
    );
    let served = fleet.origin.served();
    assert!(
        served <= SIZE as u64 + SLACK,
        "the origin served {served} bytes for a {SIZE}-byte file"
    );
    assert_eq!(fleet.record(&token, "state"), "succeeded");
    assert_eq!(fleet.record(&token, "attempts"), "2");
    eprintln!("kill -9 at {at} bytes; finished {took:?} later; origin served {served}");
}

#[tokio::test]
async fn an_unsplash_import_survives_the_kill_of_its_instance_and_is_tracked_once() {
    use ferry_testkit::fake::unsplash::FakeUnsplash;
    use std::sync::atomic::Ordering;

    let mut fleet = fleet().await;
    let unsplash = FakeUnsplash::start("fleet-key").await;
    let id = unsplash
        .state
        .add(Some("Fleet"), "Ada Lovelace", fleet.data.clone());
    // The fleet origin's pace (64 KiB per 12 ms): the import lasts ~5 s.
    unsplash.state.faults.slow_ms.store(12, Ordering::SeqCst);
    fleet.extra = ["--secret", "fleet-secret", "--unsplash-key", "fleet-key"]
        .map(str::to_owned)
        .to_vec();
    fleet
        .extra
        .extend(["--unsplash-api-url".into(), unsplash.api_url()]);
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let res = reqwest::Client::new()
        .post(format!("{}/search/unsplash/get/{id}", a.base))
        .json(
            &json!({"protocol": "tus", "endpoint": format!("{}/files/", fleet.dest.base),
            "size": SIZE, "metadata": {"name": "fleet.jpg"}}),
        )
        .send()
        .await
        .expect("search get");
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    let token = body["token"].as_str().expect("token").to_owned();
    let mut ws = socket(&b, &token).await;
    until_progress(&mut ws, 40.0).await;
    a.kill9();
    let url = until_success(&mut ws, Duration::from_secs(60)).await;
    fleet.assert_stored(&url).await;
    assert_eq!(fleet.record(&token, "attempts"), "2");
    assert_eq!(
        unsplash.state.tracked(&id),
        1,
        "the taken-over import is not tracked again"
    );
    assert_eq!(
        unsplash.state.ranged.load(Ordering::SeqCst),
        1,
        "B resumed with Range"
    );
}

#[tokio::test]
async fn sigterm_hands_a_transfer_over_at_once() {
    let mut fleet = fleet().await;
    // A takeover window far longer than the test: only a hand-over can finish it in time.
    let mut a = fleet.instance(600).await;
    let b = fleet.instance(600).await;
    let token = fleet.start_import(&a).await;
    let mut ws = socket(&b, &token).await;
    until_progress(&mut ws, 30.0).await;
    assert!(a.terminate(Duration::from_secs(20)), "A exits on SIGTERM");
    let url = until_success(&mut ws, Duration::from_secs(30)).await;
    fleet.assert_stored(&url).await;
    let served = fleet.origin.served();
    assert!(served <= SIZE as u64 + SLACK, "origin served {served}");
    assert_eq!(fleet.record(&token, "state"), "succeeded");
}

#[tokio::test]
async fn pause_and_resume_from_another_instance() {
    let mut fleet = fleet().await;
    let a = fleet.instance(30).await;
    let b = fleet.instance(30).await;
    let token = fleet.start_import(&a).await;
    let mut ws = socket(&b, &token).await;
    until_progress(&mut ws, 20.0).await;
    send(&mut ws, "pause").await;
    // A stops reading the origin (what was in flight drains into buffers first).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let paused_at = fleet.origin.served();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        fleet.origin.served(),
        paused_at,
        "the origin is still being read while paused"
    );
    assert!(paused_at < SIZE as u64);
    assert_eq!(fleet.record(&token, "desired"), "pause");
    send(&mut ws, "resume").await;
    let url = until_success(&mut ws, Duration::from_secs(60)).await;
    fleet.assert_stored(&url).await;
    drop(a);
}

#[tokio::test]
async fn a_cancel_sent_while_the_owner_is_dead_is_honoured_by_the_next() {
    let mut fleet = fleet().await;
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let token = fleet.start_import(&a).await;
    let mut ws = socket(&b, &token).await;
    until_progress(&mut ws, 20.0).await;
    let upload = fleet.record(&token, "h.upload_url");
    assert!(upload.starts_with(&fleet.dest.base), "{upload:?}");
    a.kill9();
    send(&mut ws, "cancel").await;
    // B claims it after the window, sees the cancel and terminates the tus upload.
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let res = client
            .head(&upload)
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .expect("HEAD");
        if res.status() == 404 || res.status() == 410 {
            break;
        }
        assert!(Instant::now() < deadline, "the upload was never terminated");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while fleet.record(&token, "state") != "canceled" {
        assert!(Instant::now() < deadline, "the record never says canceled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(fleet.origin.served() < SIZE as u64);

    // Redis gone: a new transfer cannot be registered, and says so.
    fleet.redis.stop();
    let res = reqwest::Client::new()
        .post(format!("{}/url/get", b.base))
        .json(&json!({
            "url": fleet.origin.file_url(),
            "protocol": "tus",
            "endpoint": format!("{}/files/", fleet.dest.base),
        }))
        .send()
        .await
        .expect("url/get");
    assert_eq!(res.status(), 503);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body["message"],
        "transfers are unavailable: the instances cannot reach their shared Redis"
    );
}

#[cfg(feature = "s3")]
#[tokio::test]
async fn an_s3_multipart_transfer_survives_the_kill_of_its_instance() {
    use ferry_testkit::garage::Garage;
    let garage = Garage::start().await;
    let mut fleet = fleet().await;
    fleet.extra = garage.ferry_args();
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let token = fleet
        .import_with(
            &a,
            json!({
                "url": fleet.origin.file_url(),
                "protocol": "s3-multipart",
                "size": SIZE,
                "metadata": {"name": "big.bin", "type": "application/octet-stream"},
            }),
        )
        .await;
    let mut ws = socket(&b, &token).await;
    until_progress(&mut ws, 40.0).await;
    assert!(!fleet.record(&token, "h.s3_upload_id").is_empty());
    a.kill9();
    let payload = success_payload(&mut ws, Duration::from_secs(60)).await;
    let answer: Value = serde_json::from_str(
        payload["response"]["responseText"]
            .as_str()
            .expect("responseText"),
    )
    .expect("answer json");
    let key = answer["key"].as_str().expect("key");
    let stored = garage.get_object(key).await.expect("the object");
    assert_eq!(stored.len(), SIZE);
    assert_eq!(sha256_hex(&stored), sha256_hex(&fleet.data));
    // B listed the parts A had finished and read the source from their end: a ranged GET, and
    // at most what A had read into unfinished parts was read twice.
    let ranges = fleet.origin.ranges();
    assert!(
        ranges.iter().any(|r| r != "bytes=0-"),
        "no resumed GET: {ranges:?}"
    );
    let part = 5 * 1024 * 1024;
    let served = fleet.origin.served();
    assert!(
        served <= SIZE as u64 + 2 * part,
        "the origin served {served} bytes for a {SIZE}-byte file"
    );
    assert_eq!(fleet.record(&token, "state"), "succeeded");
    eprintln!("s3 takeover: origin served {served}");
}
