//! Several `ferry` processes on one Redis and one Garage bucket (`--store s3 --redis-url`): an
//! upload created on one instance is PATCHed, HEADed and downloaded through the others byte-exact;
//! two PATCHes for the same upload on two instances at once never both complete and never
//! corrupt it; `/health` follows Redis' reachability and `/metrics` carries the cluster figures.
#![cfg(feature = "s3")]

mod common;

use std::path::Path;
use std::time::Duration;

use ferry_testkit::garage::Garage;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use ferry_testkit::{random_bytes, sha256_hex};

/// `ferry serve` on `data`, storing in Garage's bucket and coordinating through Redis; waits
/// until `/health` says so.
async fn start(data: &Path, garage: &Garage, redis_url: &str) -> Ferry {
    let data = data.display().to_string();
    let mut args = common::s3_store(garage);
    args.extend(
        [
            "--data-dir",
            &data,
            "--ui-dir",
            &data,
            "--redis-url",
            redis_url,
        ]
        .map(str::to_owned),
    );
    let ferry = Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await;
    let res = reqwest::get(format!("{}/health", ferry.base))
        .await
        .expect("health");
    assert_eq!(res.status(), 200);
    ferry
}

async fn create(client: &reqwest::Client, on: &Ferry, len: usize) -> String {
    let location = common::create(client, &on.base, len).await;
    // The path, so the same upload can be addressed on every instance.
    location
        .strip_prefix("http://")
        .map_or(location.clone(), |rest| {
            rest.find('/')
                .map_or(location.clone(), |i| rest[i..].to_owned())
        })
}

async fn head(client: &reqwest::Client, on: &Ferry, path: &str) -> usize {
    let res = client
        .head(format!("{}{path}", on.base))
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .expect("head");
    assert_eq!(res.status(), 200);
    res.headers()["upload-offset"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number")
}

async fn patch(client: &reqwest::Client, on: &Ferry, path: &str, offset: usize, body: &[u8]) {
    let res = client
        .patch(format!("{}{path}", on.base))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(body.to_vec())
        .send()
        .await
        .expect("patch");
    assert_eq!(res.status(), 204);
    assert_eq!(
        res.headers()["upload-offset"],
        (offset + body.len()).to_string().as_str()
    );
}

async fn download_sha256(client: &reqwest::Client, on: &Ferry, path: &str) -> String {
    let res = client
        .get(format!("{}{path}", on.base))
        .send()
        .await
        .expect("download");
    assert_eq!(res.status(), 200);
    sha256_hex(&res.bytes().await.expect("body"))
}

/// A PATCH from offset 0 whose body trickles in (256 KiB every 20 ms), so two of them overlap.
/// Returns the status, or `None` when the server cut the request off.
async fn slow_patch(
    client: reqwest::Client,
    url: String,
    bytes: Vec<u8>,
) -> Option<reqwest::StatusCode> {
    paced_patch(client, url, bytes, Duration::from_millis(20)).await
}

/// A PATCH from offset 0 sending 256 KiB every `pace`.
async fn paced_patch(
    client: reqwest::Client,
    url: String,
    bytes: Vec<u8>,
    pace: Duration,
) -> Option<reqwest::StatusCode> {
    let len = bytes.len();
    let chunks: Vec<bytes::Bytes> = bytes
        .chunks(256 * 1024)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    let body = futures_util::stream::unfold(chunks.into_iter(), move |mut rest| async move {
        let next = rest.next()?;
        tokio::time::sleep(pace).await;
        Some((Ok::<_, std::io::Error>(next), rest))
    });
    client
        .patch(url)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", len.to_string())
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .ok()
        .map(|res| res.status())
}

#[tokio::test]
async fn three_instances_share_tus_uploads_through_redis() {
    let garage = Garage::start().await;
    let mut redis = RedisServer::start();
    let dirs: Vec<_> = (0..3)
        .map(|_| tempfile::tempdir().expect("temp dir"))
        .collect();
    let a = start(dirs[0].path(), &garage, &redis.url()).await;
    let b = start(dirs[1].path(), &garage, &redis.url()).await;
    let c = start(dirs[2].path(), &garage, &redis.url()).await;
    let client = reqwest::Client::new();

    // Create on A, half on B, HEAD on C, the rest on A, GET on B.
    let bytes = random_bytes(7 * 1024 * 1024 + 4321);
    let half = bytes.len() / 2;
    let path = create(&client, &a, bytes.len()).await;
    patch(&client, &b, &path, 0, &bytes[..half]).await;
    assert_eq!(head(&client, &c, &path).await, half);
    patch(&client, &a, &path, half, &bytes[half..]).await;
    assert_eq!(head(&client, &c, &path).await, bytes.len());
    assert_eq!(
        download_sha256(&client, &b, &path).await,
        sha256_hex(&bytes)
    );

    // Two PATCHes of the same upload on A and B at once: never both complete.
    let bytes = random_bytes(6 * 1024 * 1024 + 77);
    let path = create(&client, &c, bytes.len()).await;
    let on_a = tokio::spawn(slow_patch(
        client.clone(),
        format!("{}{path}", a.base),
        bytes.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let on_b = tokio::spawn(slow_patch(
        client.clone(),
        format!("{}{path}", b.base),
        bytes.clone(),
    ));
    let (on_a, on_b) = (on_a.await.expect("task"), on_b.await.expect("task"));
    let ok = Some(reqwest::StatusCode::NO_CONTENT);
    assert!(
        !(on_a == ok && on_b == ok),
        "both PATCHes from offset 0 completed: {on_a:?} {on_b:?}"
    );
    // Resume from whatever offset the fleet reports, on the third instance.
    let offset = head(&client, &c, &path).await;
    eprintln!("concurrent PATCHes: A {on_a:?}, B {on_b:?}; the fleet reports offset {offset}");
    assert!(offset <= bytes.len(), "offset {offset} past the end");
    if offset < bytes.len() {
        patch(&client, &c, &path, offset, &bytes[offset..]).await;
    }
    assert_eq!(head(&client, &a, &path).await, bytes.len());
    assert_eq!(
        download_sha256(&client, &a, &path).await,
        sha256_hex(&bytes)
    );

    // The figures: every instance reaches Redis, none holds a lease once requests ended.
    let metrics = client
        .get(format!("{}/metrics", a.base))
        .send()
        .await
        .expect("metrics");
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.expect("text");
    assert!(text.contains("ferry_companion_transfers_active"), "{text}");
    let figure = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name}{{instance=\"")))
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_owned)
    };
    assert_eq!(
        figure("ferry_cluster_redis_reachable").as_deref(),
        Some("1")
    );
    assert_eq!(figure("ferry_cluster_leases_held").as_deref(), Some("0"));

    // Redis gone: /health says so with 503; back: 200 again.
    redis.stop();
    let res = client
        .get(format!("{}/health", b.base))
        .send()
        .await
        .expect("health");
    assert_eq!(res.status(), 503);
    assert_eq!(
        res.text().await.expect("text"),
        "redis unreachable: this instance cannot coordinate with the others\n"
    );
    redis.restart();
    let mut status = 0;
    for _ in 0..50 {
        let res = client
            .get(format!("{}/health", b.base))
            .send()
            .await
            .expect("health");
        status = res.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "health after Redis came back");
}

#[tokio::test]
async fn a_head_elsewhere_stops_a_slow_patch_and_a_killed_writer_resumes_elsewhere() {
    let garage = Garage::start().await;
    let redis = RedisServer::start();
    let dirs: Vec<_> = (0..2)
        .map(|_| tempfile::tempdir().expect("temp dir"))
        .collect();
    let a = start(dirs[0].path(), &garage, &redis.url()).await;
    let b = start(dirs[1].path(), &garage, &redis.url()).await;
    let client = reqwest::Client::new();
    let pace = Duration::from_millis(100);

    // A slow PATCH on A (12 MiB over ~5 s); a HEAD on B meanwhile asks A to stop and save.
    let bytes = random_bytes(12 * 1024 * 1024 + 5);
    let path = create(&client, &a, bytes.len()).await;
    let writer = tokio::spawn(paced_patch(
        client.clone(),
        format!("{}{path}", a.base),
        bytes.clone(),
        pace,
    ));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let asked = std::time::Instant::now();
    let offset = head(&client, &b, &path).await;
    let waited = asked.elapsed();
    assert!(waited < Duration::from_secs(5), "HEAD on B took {waited:?}");
    let ended = writer.await.expect("task");
    assert_ne!(
        ended,
        Some(reqwest::StatusCode::NO_CONTENT),
        "A's PATCH was not stopped"
    );
    assert!(offset < bytes.len(), "offset {offset}");
    // Exact: nothing moved after B's answer, on any instance.
    assert_eq!(head(&client, &a, &path).await, offset);
    patch(&client, &b, &path, offset, &bytes[offset..]).await;
    assert_eq!(
        download_sha256(&client, &a, &path).await,
        sha256_hex(&bytes)
    );
    eprintln!("HEAD on B answered in {waited:?} at offset {offset}; A's PATCH ended {ended:?}");

    // kill -9 of A mid-PATCH: B answers once A's lease expires, and the upload resumes there.
    let bytes = random_bytes(12 * 1024 * 1024 + 9);
    let path = create(&client, &a, bytes.len()).await;
    let writer = tokio::spawn(paced_patch(
        client.clone(),
        format!("{}{path}", a.base),
        bytes.clone(),
        pace,
    ));
    // By then at least one 6 MiB part is stored (its info rewritten), the next one is filling.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    a.kill9();
    let _ = writer.await;
    let asked = std::time::Instant::now();
    let offset = head(&client, &b, &path).await;
    eprintln!(
        "after kill -9: HEAD on B answered in {:?} at offset {offset}",
        asked.elapsed()
    );
    assert!(offset <= bytes.len());
    patch(&client, &b, &path, offset, &bytes[offset..]).await;
    assert_eq!(
        download_sha256(&client, &b, &path).await,
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn unreachable_redis_stops_the_start_with_the_url_redacted() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let data = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(data.path())
        .arg("--ui-dir")
        .arg(data.path())
        .args([
            "--redis-url",
            &format!("redis://:hunter2@127.0.0.1:{port}/0"),
        ])
        .env("NO_COLOR", "1")
        .output()
        .expect("run ferry");
    assert!(!out.status.success());
    // The log goes to standard output; read both streams.
    let stderr = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stderr.contains(&format!(
            "Redis at redis://:***@127.0.0.1:{port}/0 is unreachable"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
