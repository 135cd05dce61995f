//! `kill -9` of `ferry` again and again (`--fsync always`) while many uploads are in flight:
//! each client resumes from HEAD after every crash, no offset `ferry` acknowledged ever goes
//! back, `/health` comes back each time, and every upload ends byte-exact.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::random_bytes;
use reqwest::Client;

use crate::resume::{Record, all_whole, until_whole};
use crate::tus::{BIN, create, health_back};

const UPLOADS: usize = 20;
const SIZE: usize = 1 << 20;
const KILLS: usize = 10;
/// Time between a restart and the next kill.
const BETWEEN_KILLS: Duration = Duration::from_millis(300);

#[tokio::test]
async fn repeated_kill_9_with_uploads_in_flight_loses_no_acknowledged_byte() {
    let data = tempfile::tempdir().expect("temp dir");
    let dir = data.path().display().to_string();
    let args = ["--data-dir", &dir, "--no-ui", "--fsync", "always"];
    let mut ferry = Ferry::start(BIN, args).await;
    let base = ferry.base.clone();
    let client = Client::new();
    let record = Arc::new(Record::default());

    let mut clients = Vec::new();
    for _ in 0..UPLOADS {
        let bytes = random_bytes(SIZE);
        let url = create(&client, &base, SIZE).await;
        let pace = Duration::from_millis(20);
        let job = until_whole(
            client.clone(),
            vec![url.clone()],
            bytes.clone(),
            32 * 1024,
            pace,
            record.clone(),
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
    all_whole(&client, clients, &record).await;
    let total = (UPLOADS * SIZE) as u64;
    let resent = record.sent() - total;
    let worst = recoveries.iter().max().copied().unwrap_or_default();
    println!(
        "faults/crashes: {KILLS} kill -9 survived with {UPLOADS} uploads of {SIZE} B in flight; \
         {resent} B re-sent ({:.0}% of {total} B); /health back within {worst:?} of each kill",
        resent as f64 * 100.0 / total as f64
    );
}
