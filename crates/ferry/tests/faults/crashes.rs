//! `kill -9` of `ferry` again and again (`--fsync always`) while many uploads are in flight:
//! each client resumes from HEAD after every crash, no offset `ferry` acknowledged ever goes
//! back, `/health` comes back each time, and every upload ends byte-exact.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::{random_bytes, sha256_hex};
use reqwest::Client;

use crate::common::{BIN, Sent, create, download, health_back, paced_patch};

const UPLOADS: usize = 20;
const SIZE: usize = 1 << 20;
const KILLS: usize = 10;
/// Time between a restart and the next kill.
const BETWEEN_KILLS: Duration = Duration::from_millis(300);
/// The longest a client keeps trying one upload.
const CLIENT_BOUND: Duration = Duration::from_secs(60);

/// The highest offset each upload's PATCH answers acknowledged.
type Acked = Arc<Mutex<HashMap<String, u64>>>;

#[tokio::test]
async fn repeated_kill_9_with_uploads_in_flight_loses_no_acknowledged_byte() {
    let data = tempfile::tempdir().expect("temp dir");
    let dir = data.path().display().to_string();
    let args = ["--data-dir", &dir, "--no-ui", "--fsync", "always"];
    let mut ferry = Ferry::start(BIN, args).await;
    let base = ferry.base.clone();
    let client = Client::new();
    let sent = Sent::default();
    let acked = Acked::default();
    let went_back = Arc::new(Mutex::new(Vec::new()));

    let mut clients = Vec::new();
    for _ in 0..UPLOADS {
        let bytes = random_bytes(SIZE);
        let url = create(&client, &base, SIZE).await;
        let job = upload(
            client.clone(),
            url.clone(),
            bytes.clone(),
            sent.clone(),
            acked.clone(),
            went_back.clone(),
        );
        clients.push((url, bytes, tokio::spawn(job)));
    }

    let mut recoveries = Vec::new();
    for _ in 0..KILLS {
        tokio::time::sleep(BETWEEN_KILLS).await;
        let started = Instant::now();
        ferry.kill9_restart().await;
        health_back(&client, &base, Duration::from_secs(10)).await;
        recoveries.push(started.elapsed());
    }
    for (url, bytes, job) in clients {
        job.await.expect("client task");
        assert_eq!(
            sha256_hex(&download(&client, &url).await),
            sha256_hex(&bytes),
            "{url}"
        );
    }
    let went_back = went_back.lock().expect("log").clone();
    assert!(
        went_back.is_empty(),
        "acknowledged offsets went back: {went_back:?}"
    );
    let total = (UPLOADS * SIZE) as u64;
    let resent = sent.load(Ordering::Relaxed) - total;
    let worst = recoveries.iter().max().copied().unwrap_or_default();
    println!(
        "faults/crashes: {KILLS} kill -9 survived with {UPLOADS} uploads of {SIZE} B in flight; \
         {resent} B re-sent ({:.1}% of {total} B); /health back within {worst:?} of each kill",
        resent as f64 * 100.0 / total as f64
    );
}

/// One client: HEAD, PATCH the rest slowly, and again after any failure, until the upload is
/// whole. Records an acknowledged offset that a later HEAD reports lower.
async fn upload(
    client: Client,
    url: String,
    bytes: Vec<u8>,
    sent: Sent,
    acked: Acked,
    went_back: Arc<Mutex<Vec<String>>>,
) {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < CLIENT_BOUND,
            "{url} did not finish in {CLIENT_BOUND:?}"
        );
        let Ok(at) = head(&client, &url).await else {
            // The server is restarting.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let before = acked.lock().expect("acked").get(&url).copied().unwrap_or(0);
        if at < before {
            went_back
                .lock()
                .expect("log")
                .push(format!("{url}: {before} -> {at}"));
        }
        if at == bytes.len() as u64 {
            return;
        }
        let rest = bytes[at as usize..].to_vec();
        let pace = Duration::from_millis(20);
        let Ok(res) = paced_patch(&client, &url, at, rest, 32 * 1024, pace, &sent).await else {
            continue;
        };
        if res.status() == 204 {
            let now: u64 = res.headers()["upload-offset"]
                .to_str()
                .expect("ascii")
                .parse()
                .expect("offset");
            let mut acked = acked.lock().expect("acked");
            let entry = acked.entry(url.clone()).or_default();
            *entry = (*entry).max(now);
        }
    }
}

/// HEAD's offset; `Err` while the server cannot answer.
async fn head(client: &Client, url: &str) -> Result<u64, ()> {
    let res = crate::common::tus(client, reqwest::Method::HEAD, url)
        .send()
        .await
        .map_err(drop)?;
    if res.status() != 200 {
        return Err(());
    }
    res.headers()["upload-offset"]
        .to_str()
        .map_err(drop)?
        .parse()
        .map_err(drop)
}
