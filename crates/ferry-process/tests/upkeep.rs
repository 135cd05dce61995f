//! Caps and expiry over real HTTP, with a manual clock: per-client caps on Assemblies in
//! progress and created per window, the disk cap on forms and tus uploads, retention of ended
//! Assemblies, the upload timeout of abandoned ones, bounded sweeper passes.

mod common;

use std::time::Duration;

use common::*;
use ferry_process::{Clock, ProcessConfig};
use serde_json::{Value, json};

fn steps() -> Value {
    json!({"f": {"robot": "/file/filter", "use": ":original"}})
}

/// A config with `clock`, callers behind 127.0.0.1 named by `X-Forwarded-For`.
fn with_clock(dir: &std::path::Path, clock: &Clock) -> ProcessConfig {
    let mut c = config(dir, false);
    c.clock = clock.clone();
    c.quotas.trusted_proxies = vec!["127.0.0.1/32".parse().expect("net")];
    c
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
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.max_active_per_client = 2;
    c.quotas.max_per_window = 3;
    c.quotas.window = Duration::from_secs(60);
    let s = start_with_peers(c).await;
    let a = "198.51.100.7";
    let mut urls = Vec::new();
    for _ in 0..2 {
        let (code, _, body) = create_as(&s.base, a, waiting()).await;
        assert_eq!(
            (code, body["ok"].as_str()),
            (200, Some("ASSEMBLY_UPLOADING")),
            "{body}"
        );
        urls.push(body["assembly_ssl_url"].as_str().expect("url").to_owned());
    }
    // A third in progress is refused, with what Transloadit's clients wait on.
    let (code, retry, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("RATE_LIMIT_REACHED")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "This client has 2 Assemblies in progress, the most allowed; wait for one to finish."
    );
    assert_eq!(body["info"]["retryIn"], 5);
    assert_eq!(retry.as_deref(), Some("5"));
    // Another client is not held back by the first.
    let (code, _, body) = create_as(&s.base, "203.0.113.9", waiting()).await;
    assert_eq!(code, 200, "{body}");
    // One ended frees a place; the window still counts what was created.
    let res = reqwest::Client::new()
        .delete(&urls[0])
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    let (code, _, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(code, 200, "{body}");
    reqwest::Client::new()
        .delete(&urls[1])
        .send()
        .await
        .expect("delete");
    clock.advance(Duration::from_secs(20));
    let (code, retry, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("RATE_LIMIT_REACHED")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "This client created 3 Assemblies in the last 60 s, the most allowed; try again in 40 s."
    );
    assert_eq!(body["info"]["retryIn"], 40);
    assert_eq!(retry.as_deref(), Some("40"));
    // The next window takes new ones.
    clock.advance(Duration::from_secs(41));
    let (code, _, body) = create_as(&s.base, a, waiting()).await;
    assert_eq!(
        (code, body["ok"].as_str()),
        (200, Some("ASSEMBLY_UPLOADING")),
        "{body}"
    );
}

#[tokio::test]
async fn the_disk_cap_refuses_files_and_assemblies_until_expiry_frees_it() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.max_disk = Some(100_000);
    c.quotas.retention = Duration::from_secs(3600);
    let s = start_with_peers(c).await;
    let file = vec![7u8; 40_000];
    for _ in 0..2 {
        let (code, _, body) = create_as(
            &s.base,
            "198.51.100.7",
            form(&params(steps()), &[("a.bin", &file)]),
        )
        .await;
        assert_eq!(code, 200, "{body}");
        settle(body["assembly_ssl_url"].as_str().expect("url")).await;
    }
    // A third file would pass 100 000 bytes: refused while it streams, nothing kept.
    let (code, _, body) = create_as(
        &s.base,
        "203.0.113.9",
        form(&params(steps()), &[("a.bin", &file)]),
    )
    .await;
    assert_eq!(
        (code, body["error"].as_str()),
        (413, Some("MAX_SIZE_EXCEEDED")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "The server's storage for Assemblies is full (100000 bytes); this file does not fit."
    );
    // A file that fills what is left still fits; its record then passes the cap, and new
    // Assemblies wait.
    let left = 100_000 - s.service.disk_bytes();
    let rest = vec![1u8; usize::try_from(left).expect("small")];
    let (code, _, body) = create_as(
        &s.base,
        "203.0.113.9",
        form(&params(steps()), &[("s.bin", &rest)]),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    settle(body["assembly_ssl_url"].as_str().expect("url")).await;
    for _ in 0..200 {
        if s.service.disk_bytes() >= 100_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, retry, body) = create_as(&s.base, "203.0.113.9", waiting()).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("CANNOT_ACCEPT_NEW_ASSEMBLIES")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "The server's storage for Assemblies is full (100000 bytes); try again once older Assemblies have expired."
    );
    assert_eq!(retry.as_deref(), Some("60"));
    // Past the retention the sweeper deletes them, and there is room again.
    clock.advance(Duration::from_secs(3601));
    let swept = s.service.sweep().await.expect("sweep");
    assert!(swept.retired >= 3, "{swept:?}");
    let (code, _, body) = create_as(
        &s.base,
        "203.0.113.9",
        form(&params(steps()), &[("a.bin", &file)]),
    )
    .await;
    assert_eq!(code, 200, "{body}");
}

#[tokio::test]
async fn ended_assemblies_and_their_files_go_after_the_retention() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.retention = Duration::from_secs(3600);
    let s = start(c).await;
    let (_, created) = create(
        &s.base,
        form(&params(steps()), &[("a.txt", b"kept a while")]),
    )
    .await;
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let done = settle(&url).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let file_url = done["results"]["f"][0]["ssl_url"]
        .as_str()
        .expect("file")
        .to_owned();
    let id = done["assembly_id"].as_str().expect("id").to_owned();
    let uploads = dir.path().join("assemblies").join(&id).join("uploads");
    assert_eq!(std::fs::read_dir(&uploads).expect("dir").count(), 1);

    clock.advance(Duration::from_secs(3599));
    assert_eq!(s.service.sweep().await.expect("sweep").retired, 0);
    assert_eq!(get(&url).await.1["ok"], "ASSEMBLY_COMPLETED");

    clock.advance(Duration::from_secs(2));
    assert_eq!(s.service.sweep().await.expect("sweep").retired, 1);
    let (code, body) = get(&url).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (410, Some("ASSEMBLY_EXPIRED")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "This Assembly ended longer ago than the server keeps Assemblies; its status and files were deleted."
    );
    assert_eq!(reqwest::get(&file_url).await.expect("get").status(), 404);
    assert_eq!(
        std::fs::read_dir(&uploads).expect("dir").count(),
        0,
        "its files are deleted"
    );
    let res = reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 410);

    // The tombstone goes after another retention: then the id is unknown.
    clock.advance(Duration::from_secs(3601));
    assert_eq!(s.service.sweep().await.expect("sweep").forgotten, 1);
    let (code, body) = get(&url).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (404, Some("ASSEMBLY_NOT_FOUND")),
        "{body}"
    );
    assert!(!dir.path().join("assemblies").join(&id).exists());
}

#[tokio::test]
async fn assemblies_without_uploads_expire_after_the_upload_timeout() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.upload_timeout = Duration::from_secs(600);
    let s = start(c).await;
    let (_, created) = create(
        &s.base,
        form(&params(steps()), &[("a.txt", b"first of two")])
            .text("num_expected_upload_files", "2"),
    )
    .await;
    assert_eq!(created["ok"], "ASSEMBLY_UPLOADING", "{created}");
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let id = created["assembly_id"].as_str().expect("id").to_owned();

    clock.advance(Duration::from_secs(599));
    assert_eq!(s.service.sweep().await.expect("sweep").abandoned, 0);
    clock.advance(Duration::from_secs(2));
    assert_eq!(s.service.sweep().await.expect("sweep").abandoned, 1);
    let (code, body) = get(&url).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (200, Some("ASSEMBLY_EXPIRED")),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "No upload reached this Assembly for 600 s; it expired and its uploads were deleted."
    );
    assert_eq!(body["uploads"], json!([]));
    let uploads = dir.path().join("assemblies").join(&id).join("uploads");
    assert_eq!(std::fs::read_dir(&uploads).expect("dir").count(), 0);
}

#[tokio::test]
async fn an_arriving_upload_restarts_the_upload_timeout() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.upload_timeout = Duration::from_secs(600);
    let s = start(c).await;
    let (_, created) = create(
        &s.base,
        form(&params(steps()), &[]).text("num_expected_upload_files", "2"),
    )
    .await;
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let id =
        ferry_process::id::Id::parse(created["assembly_id"].as_str().expect("id")).expect("id");
    clock.advance(Duration::from_secs(400));
    // An upload arrives (as the tus bridge adds one).
    let file_id = ferry_process::id::Id::random();
    let path = dir
        .path()
        .join("assemblies")
        .join(id.as_str())
        .join("uploads")
        .join(file_id.as_str());
    std::fs::write(&path, b"late").expect("write");
    let file = ferry_process::assembly::record::FileRecord::upload(
        file_id,
        "late.txt".into(),
        4,
        "text/plain".into(),
        "file".into(),
    );
    assert!(s.service.add_upload(&id, file).await.expect("add"));
    clock.advance(Duration::from_secs(400));
    assert_eq!(s.service.sweep().await.expect("sweep").abandoned, 0);
    assert_eq!(get(&url).await.1["ok"], "ASSEMBLY_UPLOADING");
    clock.advance(Duration::from_secs(201));
    assert_eq!(s.service.sweep().await.expect("sweep").abandoned, 1);
}

#[tokio::test]
async fn a_sweeper_pass_does_bounded_work() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    c.quotas.upload_timeout = Duration::from_secs(60);
    c.quotas.max_per_window = 0;
    c.quotas.max_active_per_client = 0;
    let s = start(c).await;
    let n = ferry_process::upkeep::sweep::MAX_PER_PASS + 3;
    for _ in 0..n {
        let (code, body) = create(&s.base, waiting()).await;
        assert_eq!(code, 200, "{body}");
    }
    clock.advance(Duration::from_secs(61));
    let first = s.service.sweep().await.expect("sweep");
    assert_eq!(first.abandoned, ferry_process::upkeep::sweep::MAX_PER_PASS);
    let second = s.service.sweep().await.expect("sweep");
    assert_eq!(second.abandoned, 3);
}

#[tokio::test]
async fn the_background_sweeper_expires_on_its_own() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = Clock::manual();
    let mut c = with_clock(dir.path(), &clock);
    // A 4 s timeout: the sweeper looks every second.
    c.quotas.upload_timeout = Duration::from_secs(4);
    let s = start(c).await;
    let (_, created) = create(&s.base, waiting()).await;
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    clock.advance(Duration::from_secs(3600));
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
