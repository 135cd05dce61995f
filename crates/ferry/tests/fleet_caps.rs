//! The per-client Assembly caps across a fleet: two `ferry` processes on one Redis and one
//! shared `--data-dir`. A client at `--assembly-max-active-per-client` on one instance is
//! refused on the other with the documented RATE_LIMIT_REACHED; its place comes back when one
//! of its Assemblies is canceled (on any instance), completes, or when the instance that alone
//! knew it dies (its lease lapses); a run taken over from a dead instance keeps its place until
//! it completes. `--assembly-max-per-client` (the window) and `--assembly-max-disk` (what the
//! shared directory holds) are the fleet's too.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

const BODY: &[u8] = b"bytes imported once the origin lets them go";
const TOO_MANY: &str =
    "This client has 1 Assemblies in progress, the most allowed; wait for one to finish.";

/// `ferry serve` on the shared `data`, on Redis, with a 2-second takeover window and `caps`.
async fn start(data: &Path, redis: &RedisServer, caps: &[&str]) -> Ferry {
    let data = data.display().to_string();
    let url = redis.url();
    let mut args = vec![
        "--no-ui",
        "--data-dir",
        &data,
        "--redis-url",
        &url,
        "--transfer-takeover",
        "2",
        "--assembly-key",
        "caps-key",
        "--allow-local-urls",
    ];
    args.extend_from_slice(caps);
    Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await
}

/// An origin whose `/file` answers [`BODY`] only once the test adds a permit to the gate; each
/// request that arrives is reported.
async fn origin() -> (SocketAddr, Arc<Semaphore>, mpsc::UnboundedReceiver<()>) {
    use axum::routing::get;
    let gate = Arc::new(Semaphore::new(0));
    let (opened, rx) = mpsc::unbounded_channel();
    let g = gate.clone();
    let app = axum::Router::new().route(
        "/file",
        get(move || {
            let (gate, opened) = (g.clone(), opened.clone());
            async move {
                let _ = opened.send(());
                let _permit = gate.acquire().await;
                axum::body::Body::from(BODY)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("origin") });
    (addr, gate, rx)
}

/// Creates an Assembly on `on`: importing `import`, or else waiting for one upload. The status
/// code, `Retry-After` and the JSON.
async fn create(on: &Ferry, import: Option<&str>) -> (u16, Option<String>, Value) {
    match import {
        Some(url) => {
            post(
                on,
                json!({"i": {"robot": "/http/import", "url": url}}),
                0,
                None,
            )
            .await
        }
        None => post(on, filter(), 1, None).await,
    }
}

fn filter() -> Value {
    json!({"f": {"robot": "/file/filter", "use": ":original"}})
}

/// POSTs an Assembly form with `steps`, `expected` uploads to come and maybe a file.
async fn post(
    on: &Ferry,
    steps: Value,
    expected: u64,
    file: Option<&[u8]>,
) -> (u16, Option<String>, Value) {
    let params = json!({"auth": {"key": "caps-key"}, "steps": steps});
    common::post_assembly(&on.base, &params, Some(expected), file).await
}

/// A tus upload of `size` bytes declared into the Assembly at `assembly_url`, created on `on`:
/// the status code and body.
async fn tus_into(on: &Ferry, assembly_url: &str, size: u64) -> (u16, String) {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let meta = format!(
        "assembly_url {},filename {}",
        b64(assembly_url),
        b64("big.bin")
    );
    let res = reqwest::Client::new()
        .post(format!("{}/files/", on.base))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", size.to_string())
        .header("Upload-Metadata", meta)
        .send()
        .await
        .expect("tus create");
    (res.status().as_u16(), res.text().await.expect("body"))
}

/// Asserts the documented refusal of one Assembly too many.
fn assert_refused(answer: &(u16, Option<String>, Value), message: &str) {
    let (code, retry, body) = answer;
    assert_eq!(
        (*code, body["error"].as_str(), body["message"].as_str()),
        (429, Some("RATE_LIMIT_REACHED"), Some(message)),
        "{body}"
    );
    assert_eq!(body["info"]["retryIn"], 5, "{body}");
    assert_eq!(retry.as_deref(), Some("5"));
}

/// Creates an uploading Assembly on `on` as soon as the fleet admits one; every refusal
/// meanwhile is the documented one.
async fn created_once_admitted(on: &Ferry, within: Duration) -> Value {
    let started = Instant::now();
    loop {
        let answer = create(on, None).await;
        if answer.0 == 200 {
            return answer.2;
        }
        assert_refused(&answer, TOO_MANY);
        assert!(started.elapsed() < within, "still refused after {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The next request the origin saw, within 15 s.
async fn next(opened: &mut mpsc::UnboundedReceiver<()>) -> Option<()> {
    tokio::time::timeout(Duration::from_secs(15), opened.recv())
        .await
        .ok()
        .flatten()
}

async fn status(on: &Ferry, id: &str) -> Value {
    reqwest::get(format!("{}/assemblies/{id}", on.base))
        .await
        .expect("get")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn a_clients_assemblies_in_progress_are_capped_across_the_fleet() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let caps = ["--assembly-max-active-per-client", "1"];
    let a = start(shared.path(), &redis, &caps).await;
    let b = start(shared.path(), &redis, &caps).await;

    let (code, _, first) = create(&a, None).await;
    assert_eq!(code, 200, "{first}");
    // B never saw it, yet refuses: the count is the fleet's.
    assert_refused(&create(&b, None).await, TOO_MANY);
    assert_refused(&create(&a, None).await, TOO_MANY);

    // Canceled on B, the Assembly A created frees its place.
    let id = first["assembly_id"].as_str().expect("id");
    let res = reqwest::Client::new()
        .delete(format!("{}/assemblies/{id}", b.base))
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    let second = created_once_admitted(&a, Duration::from_secs(5)).await;
    assert_eq!(second["ok"], "ASSEMBLY_UPLOADING", "{second}");
    assert_refused(&create(&b, None).await, TOO_MANY);

    // A dies with it: only A knew it, so its count lapses with its lease (two takeover
    // windows) and B admits one again.
    a.kill9();
    assert_refused(&create(&b, None).await, TOO_MANY);
    let third = created_once_admitted(&b, Duration::from_secs(15)).await;
    assert_eq!(third["ok"], "ASSEMBLY_UPLOADING", "{third}");
}

#[tokio::test]
async fn a_run_taken_over_keeps_its_place_until_it_completes() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let caps = ["--assembly-max-active-per-client", "1"];
    let a = start(shared.path(), &redis, &caps).await;
    let b = start(shared.path(), &redis, &caps).await;
    let (origin, gate, mut opened) = origin().await;
    let url = format!("http://{origin}/file");

    let (code, _, running) = create(&a, Some(&url)).await;
    assert_eq!(
        (code, running["ok"].as_str()),
        (200, Some("ASSEMBLY_EXECUTING")),
        "{running}"
    );
    assert_eq!(
        next(&mut opened).await,
        Some(()),
        "A never started the import"
    );
    assert_refused(&create(&b, None).await, TOO_MANY);

    // A dies mid-run; B takes the run over (the origin sees the import again) and counts it:
    // refused throughout, past the lease A last renewed.
    a.kill9();
    assert_eq!(
        next(&mut opened).await,
        Some(()),
        "B never took the run over"
    );
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(5) {
        assert_refused(&create(&b, None).await, TOO_MANY);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The run completes: its place comes back.
    gate.add_permits(1);
    let id = running["assembly_id"].as_str().expect("id");
    let mut last = Value::Null;
    for _ in 0..100 {
        last = status(&b, id).await;
        if last["ok"] != "ASSEMBLY_EXECUTING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["ok"], "ASSEMBLY_COMPLETED", "{last}");
    let next_one = created_once_admitted(&b, Duration::from_secs(5)).await;
    assert_eq!(next_one["ok"], "ASSEMBLY_UPLOADING", "{next_one}");
}

#[tokio::test]
async fn the_creation_window_is_the_fleets() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let caps = [
        "--assembly-max-per-client",
        "2",
        "--assembly-rate-window",
        "600",
    ];
    let a = start(shared.path(), &redis, &caps).await;
    let b = start(shared.path(), &redis, &caps).await;
    assert_eq!(create(&a, None).await.0, 200);
    assert_eq!(create(&b, None).await.0, 200);
    for on in [&a, &b] {
        let (code, retry, body) = create(on, None).await;
        assert_eq!(
            (code, body["error"].as_str()),
            (429, Some("RATE_LIMIT_REACHED")),
            "{body}"
        );
        let wait = body["info"]["retryIn"].as_u64().expect("retryIn");
        assert!((590..=600).contains(&wait), "{body}");
        assert_eq!(
            body["message"].as_str(),
            Some(
                format!(
                    "This client created 2 Assemblies in the last 600 s, the most allowed; try again in {wait} s."
                )
                .as_str()
            )
        );
        assert_eq!(retry, Some(wait.to_string()));
    }
}

#[tokio::test]
async fn the_disk_cap_counts_every_instances_assemblies() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let caps = ["--assembly-max-disk", "50000", "--assembly-retention", "1"];
    let a = start(shared.path(), &redis, &caps).await;
    let b = start(shared.path(), &redis, &caps).await;
    const FULL: &str =
        "The server's storage for Assemblies is full (50000 bytes); this file does not fit.";

    // B has an Assembly waiting for an upload; A holds 40 000 bytes in another.
    let (code, _, waiting) = create(&b, None).await;
    assert_eq!(code, 200, "{waiting}");
    let url = waiting["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let (code, _, held) = post(&a, filter(), 1, Some(&[7u8; 40_000])).await;
    assert_eq!(
        (code, held["ok"].as_str()),
        (200, Some("ASSEMBLY_UPLOADING")),
        "{held}"
    );

    // B, which never saw A's Assembly, refuses 20 000 more, by tus and in a form.
    let started = Instant::now();
    loop {
        let (code, body) = tus_into(&b, &url, 20_000).await;
        if code == 413 {
            let body: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(
                (body["error"].as_str(), body["message"].as_str()),
                (Some("MAX_SIZE_EXCEEDED"), Some(FULL)),
                "{body}"
            );
            break;
        }
        assert_eq!(code, 201, "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "B never counted A's bytes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, _, body) = post(&b, filter(), 1, Some(&[8u8; 20_000])).await;
    assert_eq!(
        (code, body["error"].as_str(), body["message"].as_str()),
        (413, Some("MAX_SIZE_EXCEEDED"), Some(FULL)),
        "{body}"
    );
    // What fits still fits.
    assert_eq!(tus_into(&b, &url, 5_000).await.0, 201);

    // Canceled on B and expired on A (a one-second retention): its bytes leave the tally.
    let id = held["assembly_id"].as_str().expect("id");
    let res = reqwest::Client::new()
        .delete(format!("{}/assemblies/{id}", b.base))
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    let started = Instant::now();
    loop {
        let (code, _, body) = post(&b, filter(), 1, Some(&[8u8; 20_000])).await;
        if code == 200 {
            break;
        }
        assert_eq!(
            (code, body["error"].as_str()),
            (413, Some("MAX_SIZE_EXCEEDED")),
            "{body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the expired Assembly's bytes stayed counted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
