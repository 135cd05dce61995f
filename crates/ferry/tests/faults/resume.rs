//! A client that does what a tus client does under faults: HEAD, PATCH the rest (slowly, so
//! faults land mid-request), and again after any failure, until the upload is whole. It
//! records what the tests check: every offset a PATCH acknowledged, any HEAD that reports less
//! than that (an acknowledged byte lost), the bytes it handed over, the refusals it got.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferry_testkit::sha256_hex;
use reqwest::{Client, Method};
use tokio::task::JoinHandle;

use crate::tus::{download, paced_patch, tus};

/// The longest one upload may take, faults included.
const BOUND: Duration = Duration::from_secs(60);

/// What the clients of one test saw, shared by all of them.
#[derive(Debug, Default)]
pub struct Record {
    /// Bytes handed to PATCH bodies, resends included.
    pub sent: Arc<AtomicU64>,
    /// `url: acknowledged -> later HEAD` for every offset that went back.
    pub went_back: Mutex<Vec<String>>,
    /// Every answer other than 204 to a PATCH, and other than 200 to a HEAD: status and body.
    pub refusals: Mutex<Vec<(u16, String)>>,
}

impl Record {
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

/// Waits for every client (its upload's URL, the bytes it must hold, its [`until_whole`] task),
/// then checks what the suite promises of them all: each upload downloads byte-exact, and no
/// acknowledged offset went back.
pub async fn all_whole(
    client: &Client,
    clients: Vec<(String, Vec<u8>, JoinHandle<()>)>,
    record: &Record,
) {
    for (url, bytes, job) in clients {
        job.await.expect("client task");
        assert_eq!(
            sha256_hex(&download(client, &url).await),
            sha256_hex(&bytes),
            "{url}"
        );
    }
    let went_back = record.went_back.lock().expect("record").clone();
    assert!(
        went_back.is_empty(),
        "acknowledged offsets went back: {went_back:?}"
    );
}

/// Uploads `bytes` to the upload at `urls` (the same upload through several instances:
/// attempt N goes to `urls[N % len]`), `chunk` bytes every `pace`, until HEAD says it is whole.
/// Panics after [`BOUND`].
pub async fn until_whole(
    client: Client,
    urls: Vec<String>,
    bytes: Vec<u8>,
    chunk: usize,
    pace: Duration,
    record: Arc<Record>,
) {
    let started = Instant::now();
    let mut acked = 0u64;
    for attempt in 0.. {
        let url = &urls[attempt % urls.len()];
        assert!(
            started.elapsed() < BOUND,
            "{url} not whole within {BOUND:?}"
        );
        let Some(at) = head(&client, url, &record).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        if at < acked {
            let lost = format!("{url}: {acked} -> {at}");
            record.went_back.lock().expect("record").push(lost);
        }
        if at == bytes.len() as u64 {
            return;
        }
        let rest = bytes[at as usize..].to_vec();
        let sent = &record.sent;
        let Ok(res) = paced_patch(&client, url, at, rest, chunk, pace, sent).await else {
            continue;
        };
        let status = res.status();
        if status == 204 {
            let offset = res.headers()["upload-offset"].to_str().expect("ascii");
            acked = acked.max(offset.parse().expect("offset"));
        } else {
            let body = res.text().await.unwrap_or_default();
            record
                .refusals
                .lock()
                .expect("record")
                .push((status.as_u16(), body));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// HEAD's offset; `None` while the server cannot answer 200.
async fn head(client: &Client, url: &str, record: &Record) -> Option<u64> {
    let res = tus(client, Method::HEAD, url).send().await.ok()?;
    if res.status() != 200 {
        let refusal = (res.status().as_u16(), String::new());
        record.refusals.lock().expect("record").push(refusal);
        return None;
    }
    res.headers()["upload-offset"].to_str().ok()?.parse().ok()
}
