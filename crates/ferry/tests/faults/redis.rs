//! Redis killed and restarted under two `ferry` instances sharing it and one Garage bucket:
//! while it is away a PATCH answers 503 with a message (the upload cannot be locked) and
//! `/health` says so; once it is back every upload finishes byte-exact, through either
//! instance, and no acknowledged offset went back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_testkit::garage::Garage;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::random_bytes;
use ferry_testkit::redis::RedisServer;
use reqwest::{Client, Method, StatusCode};

use crate::resume::{Record, all_whole, until_whole};
use crate::tus::{BIN, create, health_back, tus};

const LOCKED_OUT: &str = "the upload cannot be locked right now; try again shortly\n";

async fn start(garage: &Garage, redis: &RedisServer, data: &tempfile::TempDir) -> Ferry {
    let mut args = crate::common::s3_store(garage);
    let dir = data.path().display().to_string();
    let url = redis.url();
    args.extend(["--no-ui", "--data-dir", &dir, "--redis-url", &url].map(str::to_owned));
    Ferry::start(BIN, args).await
}

#[tokio::test]
async fn redis_killed_under_two_instances_answers_503_then_every_upload_finishes() {
    let garage = Garage::start().await;
    let mut redis = RedisServer::start();
    let (data_a, data_b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let a = start(&garage, &redis, &data_a).await;
    let b = start(&garage, &redis, &data_b).await;
    let client = Client::new();
    let record = Arc::new(Record::default());
    let mut clients = Vec::new();
    for n in 0..6 {
        let bytes = random_bytes(3 << 20);
        let (first, second) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let url = create(&client, &first.base, bytes.len()).await;
        let other = url.replacen(&first.base, &second.base, 1);
        let pace = Duration::from_millis(20);
        let job = until_whole(
            client.clone(),
            vec![url.clone(), other],
            bytes.clone(),
            64 * 1024,
            pace,
            record.clone(),
        );
        clients.push((url, bytes, tokio::spawn(job)));
    }
    let probe = create(&client, &a.base, 10).await;

    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = Instant::now();
    redis.stop();
    let patch = tus(&client, Method::PATCH, &probe.replacen(&a.base, &b.base, 1))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(vec![7u8; 10])
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("an answer while Redis is away");
    assert_eq!(patch.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(patch.headers()["retry-after"], "1");
    assert_eq!(patch.text().await.expect("message"), LOCKED_OUT);
    let health = client
        .get(format!("{}/health", a.base))
        .send()
        .await
        .expect("health");
    assert_eq!(health.status(), StatusCode::SERVICE_UNAVAILABLE);

    redis.restart();
    health_back(&client, &a.base, Duration::from_secs(30)).await;
    health_back(&client, &b.base, Duration::from_secs(30)).await;
    let recovered = killed.elapsed();
    all_whole(&client, clients, &record).await;
    let refusals = record.refusals.lock().expect("record").clone();
    let unexpected: Vec<_> = refusals
        .iter()
        .filter(|(status, body)| !(*status == 503 && (body.is_empty() || body == LOCKED_OUT)))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
    println!(
        "faults/redis: Redis away then back, both instances healthy {recovered:?} after the kill; \
         6 uploads byte-exact; {} refusals meanwhile; {} B re-sent",
        refusals.len(),
        record.sent() - 6 * (3 << 20)
    );
}
