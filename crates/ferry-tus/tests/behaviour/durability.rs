//! Durability of the fs store through real requests: what a request waits on before it answers
//! (each sync it owes, started together rather than one after another, seen by a probe that
//! holds them), what an answered creation-with-upload still holds after the store reopens, and
//! what a creation cut short by a crash leaves (no upload; reclaimed by expiry).

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use ferry_testkit::{random_bytes, sha256_hex};
use ferry_tus::store::fs::{FsStore, SyncProbe, Synced};
use ferry_tus::{TusConfig, UploadId};

use crate::common::{Endpoint, OCTETS, V};

/// How long a held sync or a test waiting for syncs waits at most.
const LIMIT: Duration = Duration::from_secs(20);

/// Holds every sync at its start while closed, and records which started and which ended well.
#[derive(Debug, Default)]
struct Gate {
    seen: Mutex<Seen>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Seen {
    started: Vec<Synced>,
    ended: Vec<Synced>,
    open: bool,
}

impl SyncProbe for Gate {
    fn started(&self, what: Synced, _path: &Path) {
        let mut seen = self.lock();
        seen.started.push(what);
        self.changed.notify_all();
        // Bounded: a test that failed before opening the gate lets the syncs go in the end.
        let held = self.changed.wait_timeout_while(seen, LIMIT, |s| !s.open);
        drop(held.unwrap_or_else(|p| p.into_inner()));
    }

    fn ended(&self, what: Synced, _path: &Path, outcome: &io::Result<()>) {
        if outcome.is_ok() {
            self.lock().ended.push(what);
            self.changed.notify_all();
        }
    }
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `n` syncs are held at their start (or [`LIMIT`]); returns those started.
    fn wait_started(&self, n: usize) -> Vec<Synced> {
        let seen = self.lock();
        let seen = self
            .changed
            .wait_timeout_while(seen, LIMIT, |s| s.started.len() < n)
            .map(|(seen, _)| seen)
            .unwrap_or_else(|p| p.into_inner().0);
        sorted(&seen.started)
    }

    fn open(&self) {
        self.lock().open = true;
        self.changed.notify_all();
    }

    /// Closed again, with nothing recorded.
    fn close(&self) {
        *self.lock() = Seen::default();
    }

    fn ended(&self) -> Vec<Synced> {
        sorted(&self.lock().ended)
    }
}

fn sorted(syncs: &[Synced]) -> Vec<Synced> {
    let mut syncs = syncs.to_vec();
    syncs.sort();
    syncs
}

/// Opens the gate when dropped, so a failed test's held syncs (and its server) can end.
struct Opens(Arc<Gate>);

impl Drop for Opens {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// An endpoint whose store's syncs pass through a closed gate.
async fn gated() -> (Endpoint, Arc<Gate>, Opens) {
    let dir = tempfile::tempdir().expect("temp dir");
    let gate = Arc::new(Gate::default());
    let store = FsStore::open(dir.path())
        .await
        .expect("store")
        .with_sync_probe(gate.clone());
    let ep = Endpoint::on(dir, store, TusConfig::default()).await;
    (ep, gate.clone(), Opens(gate))
}

/// Sends `request` and checks the syncs it waits on: `want` start and are all held at once
/// (started together: one after another, the first would hold the rest back), the answer does
/// not come while they are held, and once they are let go it comes with all of them ended.
async fn answered_after_syncs(
    gate: &Arc<Gate>,
    request: reqwest::RequestBuilder,
    want: &[Synced],
) -> reqwest::Response {
    let mut answer = tokio::spawn(request.send());
    let waiting = gate.clone();
    let n = want.len();
    let started = tokio::task::spawn_blocking(move || waiting.wait_started(n))
        .await
        .expect("waited");
    assert_eq!(
        started, want,
        "the syncs owed were not all under way at once (run one after another, or one dropped)"
    );
    // Absence cannot be proven in bounded time; an answer that did not wait would come within
    // this (a loaded machine can only make the check miss, never fail wrongly).
    let early = tokio::time::timeout(Duration::from_millis(300), &mut answer).await;
    assert!(early.is_err(), "answered while its syncs were held");
    gate.open();
    let res = answer.await.expect("request task").expect("answer");
    assert_eq!(gate.ended(), want, "answered before every sync ended well");
    res
}

#[tokio::test]
async fn a_creation_with_upload_answers_after_its_info_data_and_directory_syncs_made_together() {
    let (ep, gate, _opens) = gated().await;
    let bytes = random_bytes(10 * 1024);
    let len = bytes.len().to_string();
    let request = ep
        .client
        .post(ep.url("/files/"))
        .header(V.0, V.1)
        .header(OCTETS.0, OCTETS.1)
        .header("Upload-Length", &len)
        .body(bytes.clone());
    let want = [Synced::Info, Synced::Data, Synced::Dir];
    let res = answered_after_syncs(&gate, request, &want).await;
    assert_eq!(res.status(), 201);
    assert_eq!(
        res.headers()
            .get("upload-offset")
            .and_then(|v| v.to_str().ok()),
        Some(len.as_str())
    );
    let location = res.headers()["location"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert_eq!(sha256_hex(&ep.stored(&location)), sha256_hex(&bytes));
}

#[tokio::test]
async fn a_creation_answers_after_its_info_and_directory_syncs_made_together() {
    let (ep, gate, _opens) = gated().await;
    let request = ep
        .client
        .post(ep.url("/files/"))
        .header(V.0, V.1)
        .header("Upload-Length", "5");
    let res = answered_after_syncs(&gate, request, &[Synced::Info, Synced::Dir]).await;
    assert_eq!(res.status(), 201);
}

#[tokio::test]
async fn a_patch_answers_after_its_data_sync() {
    let (ep, gate, _opens) = gated().await;
    gate.open();
    let upload = ep.create(Some(5), &[]).await;
    gate.close();
    let request = ep
        .client
        .patch(ep.url(&upload))
        .header(V.0, V.1)
        .header(OCTETS.0, OCTETS.1)
        .header("Upload-Offset", "0")
        .body(b"hello".to_vec());
    let res = answered_after_syncs(&gate, request, &[Synced::Data]).await;
    assert_eq!(res.status(), 204);
    assert_eq!(ep.stored(&upload), b"hello");
}

#[tokio::test]
async fn a_creation_with_upload_holds_its_offset_and_bytes_after_the_store_reopens() {
    let ep = Endpoint::start().await;
    let bytes = random_bytes(300_000);
    let (first, rest) = bytes.split_at(123_457);
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, OCTETS, ("Upload-Length", &bytes.len().to_string())],
            first.to_vec(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.header("upload-offset"), Some("123457"));
    let upload = res.header("location").expect("location").to_owned();

    let ep = ep.restart(TusConfig::default()).await;
    let head = ep.send("HEAD", &upload, &[V], Vec::new()).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("upload-offset"), Some("123457"));
    assert_eq!(ep.patch(&upload, 123_457, rest).await.status, 204);
    let got = ep.send("GET", &upload, &[], Vec::new()).await;
    assert_eq!(got.status, 200);
    assert_eq!(sha256_hex(&got.body), sha256_hex(&bytes));
}

/// Sets `path`'s modification time `secs` into the past.
fn age(path: &Path, secs: u64) {
    let then = SystemTime::now() - Duration::from_secs(secs);
    File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(then))
        .expect("set mtime");
}

/// What a crash before a creation's answer can leave: an empty info (its contents never reached
/// the disk) beside its data file, an info without its data file; and an info rewrite's
/// temporary file. None is an upload; expiry reclaims the first two once as old as any abandoned
/// upload (a fresh one may be a creation under way), and the store's opening removes the third.
#[tokio::test]
async fn what_a_crash_leaves_of_a_creation_is_no_upload_and_expires() {
    let ep = Endpoint::start().await;
    let kept = ep.create(Some(4), &[]).await;
    assert_eq!(ep.patch(&kept, 0, b"kept").await.status, 204);
    let kept_id = kept.trim_start_matches("/files/").to_owned();
    let dir = ep.dir.path().to_path_buf();
    let [empty, no_data, fresh] = [(); 3].map(|()| UploadId::generate());
    std::fs::write(dir.join(format!("{empty}.info")), b"").expect("empty info");
    std::fs::write(dir.join(empty.as_str()), b"partial").expect("its data");
    let info = std::fs::read(dir.join(format!("{kept_id}.info"))).expect("an info");
    let info = String::from_utf8(info)
        .expect("JSON")
        .replace(&kept_id, no_data.as_str());
    std::fs::write(dir.join(format!("{no_data}.info")), info).expect("info without data");
    std::fs::write(dir.join(format!("{fresh}.info")), b"").expect("fresh empty info");
    std::fs::write(dir.join(format!("{kept_id}.info.tmp")), b"{\"id\":").expect("tmp");
    for old in [format!("{empty}.info"), format!("{no_data}.info")] {
        age(&dir.join(old), 7_200);
    }

    let ep = ep
        .restart(TusConfig {
            expiry: Some(Duration::from_secs(3_600)),
            ..TusConfig::default()
        })
        .await;
    let dir = ep.dir.path().to_path_buf();
    assert!(!dir.join(format!("{kept_id}.info.tmp")).exists());
    for id in [&empty, &no_data, &fresh] {
        let head = ep
            .send("HEAD", &format!("/files/{id}"), &[V], Vec::new())
            .await;
        assert_eq!(head.status, 404, "{id}");
    }
    let now = ferry_tus::store::now_secs();
    assert_eq!(
        ep.state.sweep(now).await,
        2,
        "the two old ones, not the fresh one"
    );
    for gone in [
        format!("{empty}.info"),
        empty.to_string(),
        format!("{no_data}.info"),
    ] {
        assert!(!dir.join(&gone).exists(), "{gone} kept");
    }
    assert!(dir.join(format!("{fresh}.info")).exists());
    let got = ep.send("GET", &kept, &[], Vec::new()).await;
    assert_eq!((got.status, got.body.as_slice()), (200, b"kept".as_slice()));
}
