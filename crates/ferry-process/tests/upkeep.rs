//! Caps and expiry over real HTTP, with a manual clock: per-client caps on Assemblies in
//! progress and created per window, the disk cap on forms and tus uploads, retention of ended
//! Assemblies, the upload timeout of abandoned ones, bounded sweeper passes.

mod common;

use std::time::Duration;

use common::*;
use ferry_process::upkeep::sweep::{MAX_PER_PASS, Swept};
use ferry_process::{Clock, Quotas};
use serde_json::{Value, json};

fn steps() -> Value {
    json!({"f": {"robot": "/file/filter", "use": ":original"}})
}

/// A service on a manual clock, its callers behind 127.0.0.1 named by `X-Forwarded-For`.
struct Upkeep {
    dir: tempfile::TempDir,
    clock: Clock,
    s: Running,
}

impl Upkeep {
    /// Serves a config `tune` sets the quotas of; `peers`: with each request's peer address
    /// known, as the per-client caps need.
    async fn start(peers: bool, tune: impl FnOnce(&mut Quotas)) -> Self {
        let dir = tempfile::tempdir().expect("dir");
        let clock = Clock::manual();
        let mut c = config(dir.path(), false);
        c.clock = clock.clone();
        c.quotas.trusted_proxies = vec!["127.0.0.1/32".parse().expect("net")];
        tune(&mut c.quotas);
        let s = if peers {
            start_with_peers(c).await
        } else {
            start(c).await
        };
        Self { dir, clock, s }
    }

    /// Moves the clock `secs` on, then runs one sweeper pass.
    async fn sweep_after(&self, secs: u64) -> Swept {
        self.clock.advance(Duration::from_secs(secs));
        self.s.service.sweep().await.expect("sweep")
    }

    /// The uploads folder of the Assembly `id`.
    fn uploads(&self, id: &str) -> std::path::PathBuf {
        self.dir.path().join("assemblies").join(id).join("uploads")
    }
}

/// The Assembly's status URL in a create answer.
fn ssl_url(created: &Value) -> String {
    created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned()
}

/// The answer `(code, body)` is `status` with Transloadit's `error` code and `message`.
fn assert_refused(code: u16, body: &Value, status: u16, error: &str, message: &str) {
    assert_eq!(
        (code, body["error"].as_str()),
        (status, Some(error)),
        "{body}"
    );
    assert_eq!(body["message"], message);
}

/// A per-client cap's refusal: 429 `RATE_LIMIT_REACHED` with `message`, and the wait `secs`
/// in `info.retryIn` and `Retry-After`.
fn assert_rate_limited(
    (code, retry, body): (u16, Option<String>, &Value),
    message: &str,
    secs: u64,
) {
    assert_refused(code, body, 429, "RATE_LIMIT_REACHED", message);
    assert_eq!(body["info"]["retryIn"], secs);
    assert_eq!(retry, Some(secs.to_string()));
}

/// `DELETE url`: the status.
async fn delete(url: &str) -> u16 {
    let res = reqwest::Client::new()
        .delete(url)
        .send()
        .await
        .expect("delete");
    res.status().as_u16()
}

/// POSTs `form` as the client at `ip`; the status, `Retry-After` and JSON.
async fn create_as(
    base: &str,
    ip: &str,
    form: reqwest::multipart::Form,
) -> (u16, Option<String>, Value) {
    let res = reqwest::Client::new()
        .post(format!("{base}/assemblies"))
        .header("x-forwarded-for", ip)
        .multipart(form)
        .send()
        .await
        .expect("post");
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, retry, res.json().await.expect("json"))
}

/// A form creating an Assembly that waits for one upload.
fn waiting() -> reqwest::multipart::Form {
    form(&params(steps()), &[]).text("num_expected_upload_files", "1")
}

async fn get(url: &str) -> (u16, Value) {
    let res = reqwest::get(url).await.expect("get");
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn one_client_is_capped_in_progress_and_per_window() {
    let u = Upkeep::start(true, |q| {
        q.max_active_per_client = 2;
        q.max_per_window = 3;
        q.window = Duration::from_secs(60);
    })
    .await;
    let (s, a) = (&u.s, "198.51.100.7");
    let mut urls = Vec::new();
    for _ in 0..2 {
        let (code, _, body) = create_as(&s.base, a, waiting()).await;
        assert_eq!(
            (code, body["ok"].as_str()),
            (200, Some("ASSEMBLY_UPLOADING")),
            "{body}"
        );
        urls.push(ssl_url(&body));
    }
    // A third in progress is refused, with what Transloadit's clients wait on.
    let (code, retry, body) = create_as(&s.base, a, waiting()).await;
    assert_rate_limited(
        (code, retry, &body),
        "This client has 2 Assemblies in progress, the most allowed; wait for one to finish.",
        5,
    );
    // Another client is not held back by the first.
    let (code, _, body) = create_as(&s.base, "203.0.113.9", waiting()).await;
    assert_eq!(code, 200, "{body}");
    // One ended frees a place; the window still counts what was created.
    assert_eq!(delete(&urls[0]).await, 200);
    let (code, _, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(code, 200, "{body}");
    delete(&urls[1]).await;
    u.clock.advance(Duration::from_secs(20));
    let (code, retry, body) = create_as(&s.base, a, waiting()).await;
    assert_rate_limited(
        (code, retry, &body),
        "This client created 3 Assemblies in the last 60 s, the most allowed; try again in 40 s.",
        40,
    );
    // The next window takes new ones.
    u.clock.advance(Duration::from_secs(41));
    let (code, _, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(
        (code, body["ok"].as_str()),
        (200, Some("ASSEMBLY_UPLOADING")),
        "{body}"
    );
}

#[tokio::test]
async fn the_disk_cap_refuses_files_and_assemblies_until_expiry_frees_it() {
    let u = Upkeep::start(true, |q| {
        q.max_disk = Some(100_000);
        q.retention = Duration::from_secs(3600);
    })
    .await;
    let s = &u.s;
    let file = vec![7u8; 40_000];
    let with = |name: &'static str, bytes: &[u8]| form(&params(steps()), &[(name, bytes)]);
    for _ in 0..2 {
        let (code, _, body) = create_as(&s.base, "198.51.100.7", with("a.bin", &file)).await;
        assert_eq!(code, 200, "{body}");
        settle(&ssl_url(&body)).await;
    }
    // A third file would pass 100 000 bytes: refused while it streams, nothing kept.
    let (code, _, body) = create_as(&s.base, "203.0.113.9", with("a.bin", &file)).await;
    assert_refused(
        code,
        &body,
        413,
        "MAX_SIZE_EXCEEDED",
        "The server's storage for Assemblies is full (100000 bytes); this file does not fit.",
    );
    // A file that fills what is left still fits; its record then passes the cap, and new
    // Assemblies wait.
    let left = 100_000 - s.service.disk_bytes();
    let rest = vec![1u8; usize::try_from(left).expect("small")];
    let (code, _, body) = create_as(&s.base, "203.0.113.9", with("s.bin", &rest)).await;
    assert_eq!(code, 200, "{body}");
    settle(&ssl_url(&body)).await;
    for _ in 0..200 {
        if s.service.disk_bytes() >= 100_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, retry, body) = create_as(&s.base, "203.0.113.9", waiting()).await;
    assert_refused(
        code,
        &body,
        429,
        "CANNOT_ACCEPT_NEW_ASSEMBLIES",
        "The server's storage for Assemblies is full (100000 bytes); try again once older Assemblies have expired.",
    );
    assert_eq!(retry.as_deref(), Some("60"));
    // Past the retention the sweeper deletes them, and there is room again.
    let swept = u.sweep_after(3601).await;
    assert!(swept.retired >= 3, "{swept:?}");
    let (code, _, body) = create_as(&s.base, "203.0.113.9", with("a.bin", &file)).await;
    assert_eq!(code, 200, "{body}");
}

#[tokio::test]
async fn ended_assemblies_and_their_files_go_after_the_retention() {
    let u = Upkeep::start(false, |q| q.retention = Duration::from_secs(3600)).await;
    let s = &u.s;
    let (_, created) = create(
        &s.base,
        form(&params(steps()), &[("a.txt", b"kept a while")]),
    )
    .await;
    let url = ssl_url(&created);
    let done = settle(&url).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let file_url = done["results"]["f"][0]["ssl_url"]
        .as_str()
        .expect("file")
        .to_owned();
    let id = done["assembly_id"].as_str().expect("id").to_owned();
    let uploads = u.uploads(&id);
    assert_eq!(std::fs::read_dir(&uploads).expect("dir").count(), 1);

    assert_eq!(u.sweep_after(3599).await.retired, 0);
    assert_eq!(get(&url).await.1["ok"], "ASSEMBLY_COMPLETED");

    assert_eq!(u.sweep_after(2).await.retired, 1);
    let (code, body) = get(&url).await;
    assert_refused(
        code,
        &body,
        410,
        "ASSEMBLY_EXPIRED",
        "This Assembly ended longer ago than the server keeps Assemblies; its status and files were deleted.",
    );
    assert_eq!(reqwest::get(&file_url).await.expect("get").status(), 404);
    assert_eq!(
        std::fs::read_dir(&uploads).expect("dir").count(),
        0,
        "its files are deleted"
    );
    assert_eq!(delete(&url).await, 410);

    // The tombstone goes after another retention: then the id is unknown.
    assert_eq!(u.sweep_after(3601).await.forgotten, 1);
    let (code, body) = get(&url).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (404, Some("ASSEMBLY_NOT_FOUND")),
        "{body}"
    );
    assert!(!u.dir.path().join("assemblies").join(&id).exists());
}

#[tokio::test]
async fn assemblies_without_uploads_expire_after_the_upload_timeout() {
    let u = Upkeep::start(false, |q| q.upload_timeout = Duration::from_secs(600)).await;
    let (_, created) = create(
        &u.s.base,
        form(&params(steps()), &[("a.txt", b"first of two")])
            .text("num_expected_upload_files", "2"),
    )
    .await;
    assert_eq!(created["ok"], "ASSEMBLY_UPLOADING", "{created}");
    let url = ssl_url(&created);
    let id = created["assembly_id"].as_str().expect("id").to_owned();

    assert_eq!(u.sweep_after(599).await.abandoned, 0);
    assert_eq!(u.sweep_after(2).await.abandoned, 1);
    let (code, body) = get(&url).await;
    assert_refused(
        code,
        &body,
        200,
        "ASSEMBLY_EXPIRED",
        "No upload reached this Assembly for 600 s; it expired and its uploads were deleted.",
    );
    assert_eq!(body["uploads"], json!([]));
    assert_eq!(std::fs::read_dir(u.uploads(&id)).expect("dir").count(), 0);
}

#[tokio::test]
async fn an_arriving_upload_restarts_the_upload_timeout() {
    let u = Upkeep::start(false, |q| q.upload_timeout = Duration::from_secs(600)).await;
    let (_, created) = create(
        &u.s.base,
        form(&params(steps()), &[]).text("num_expected_upload_files", "2"),
    )
    .await;
    let url = ssl_url(&created);
    let id =
        ferry_process::id::Id::parse(created["assembly_id"].as_str().expect("id")).expect("id");
    u.clock.advance(Duration::from_secs(400));
    // An upload arrives (as the tus bridge adds one).
    let file_id = ferry_process::id::Id::random();
    let path = u.uploads(id.as_str()).join(file_id.as_str());
    std::fs::write(&path, b"late").expect("write");
    let file = ferry_process::assembly::record::FileRecord::upload(
        file_id,
        "late.txt".into(),
        4,
        "text/plain".into(),
        "file".into(),
    );
    assert!(u.s.service.add_upload(&id, file).await.expect("add"));
    assert_eq!(u.sweep_after(400).await.abandoned, 0);
    assert_eq!(get(&url).await.1["ok"], "ASSEMBLY_UPLOADING");
    assert_eq!(u.sweep_after(201).await.abandoned, 1);
}

#[tokio::test]
async fn a_sweeper_pass_does_bounded_work() {
    let u = Upkeep::start(false, |q| {
        q.upload_timeout = Duration::from_secs(60);
        q.max_per_window = 0;
        q.max_active_per_client = 0;
    })
    .await;
    for _ in 0..MAX_PER_PASS + 3 {
        let (code, body) = create(&u.s.base, waiting()).await;
        assert_eq!(code, 200, "{body}");
    }
    assert_eq!(u.sweep_after(61).await.abandoned, MAX_PER_PASS);
    assert_eq!(u.sweep_after(0).await.abandoned, 3);
}

#[tokio::test]
async fn the_background_sweeper_expires_on_its_own() {
    // A 4 s timeout: the sweeper looks every second.
    let u = Upkeep::start(false, |q| q.upload_timeout = Duration::from_secs(4)).await;
    let (_, created) = create(&u.s.base, waiting()).await;
    let url = ssl_url(&created);
    u.clock.advance(Duration::from_secs(3600));
    let mut last = Value::Null;
    for _ in 0..100 {
        last = get(&url).await.1;
        if last["error"] == "ASSEMBLY_EXPIRED" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not expired by the background sweeper: {last}");
}
