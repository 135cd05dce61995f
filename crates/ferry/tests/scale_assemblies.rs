//! Two `ferry` processes on one Redis and one shared `--data-dir` running Assemblies: any
//! instance answers for any Assembly, a run is claimed by exactly one instance, the other takes
//! it over and finishes it from its inputs when the first is killed (-9), and a cancel sent to
//! one instance stops the run on the other.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const BODY: &[u8] = b"bytes imported by whichever instance runs the Assembly";

/// `ferry serve` on the shared `data`, on Redis, with a 2-second takeover window.
async fn start(data: &Path, redis: &RedisServer) -> Ferry {
    let data = data.display().to_string();
    let url = redis.url();
    Ferry::start(
        env!("CARGO_BIN_EXE_ferry"),
        [
            "--no-ui",
            "--data-dir",
            &data,
            "--redis-url",
            &url,
            "--transfer-takeover",
            "2",
            "--assembly-key",
            "fleet-key",
            "--allow-local-urls",
        ],
    )
    .await
}

/// An origin for `/http/import`: the first `/file` request hangs (the instance that makes it is
/// then killed), later ones answer [`BODY`]; `/hang` always hangs. Each request that arrives is
/// reported as "opened", each hung one that the importer drops as "closed".
async fn origin() -> (SocketAddr, mpsc::UnboundedReceiver<&'static str>) {
    use axum::routing::get;
    let (events, rx) = mpsc::unbounded_channel::<&'static str>();
    let seen = Arc::new(AtomicUsize::new(0));
    let hang = |events: mpsc::UnboundedSender<&'static str>| {
        struct OnDrop(mpsc::UnboundedSender<&'static str>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                let _ = self.0.send("closed");
            }
        }
        let guard = OnDrop(events);
        axum::body::Body::from_stream(futures_util::stream::once(async move {
            let _guard = guard;
            std::future::pending::<Result<bytes::Bytes, std::io::Error>>().await
        }))
    };
    let (file_events, hang_events) = (events.clone(), events);
    let app = axum::Router::new()
        .route(
            "/file",
            get(move || {
                let events = file_events.clone();
                let first = seen.fetch_add(1, Ordering::SeqCst) == 0;
                async move {
                    let _ = events.send("opened");
                    if first {
                        hang(events)
                    } else {
                        axum::body::Body::from(BODY)
                    }
                }
            }),
        )
        .route(
            "/hang",
            get(move || {
                let events = hang_events.clone();
                async move {
                    let _ = events.send("opened");
                    hang(events)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("origin") });
    (addr, rx)
}

/// Creates an Assembly importing `url` on `on`; its status.
async fn create(on: &Ferry, url: &str) -> Value {
    let params = json!({"auth": {"key": "fleet-key"}, "steps": {"i": {"robot": "/http/import", "url": url}}});
    let (status, _, body) = common::post_assembly(&on.base, &params, None, None).await;
    assert_eq!(status, 200);
    body
}

async fn status(on: &Ferry, id: &str) -> Value {
    reqwest::get(format!("{}/assemblies/{id}", on.base))
        .await
        .expect("get")
        .json()
        .await
        .expect("json")
}

async fn next(events: &mut mpsc::UnboundedReceiver<&'static str>) -> Option<&'static str> {
    tokio::time::timeout(Duration::from_secs(15), events.recv())
        .await
        .ok()
        .flatten()
}

#[tokio::test]
async fn a_run_is_taken_over_when_its_instance_dies_and_any_instance_answers() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let a = start(shared.path(), &redis).await;
    let b = start(shared.path(), &redis).await;
    let (origin, mut events) = origin().await;

    let created = create(&a, &format!("http://{origin}/file")).await;
    assert_eq!(created["ok"], "ASSEMBLY_EXECUTING", "{created}");
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    assert_eq!(
        next(&mut events).await,
        Some("opened"),
        "A never started the import"
    );
    // B answers for the Assembly A runs.
    let seen = status(&b, &id).await;
    assert_eq!(
        (seen["assembly_id"].as_str(), seen["ok"].as_str()),
        (Some(id.as_str()), Some("ASSEMBLY_EXECUTING")),
        "{seen}"
    );

    a.kill9();
    // B claims the run after the takeover window and runs it again from its inputs.
    let mut last = Value::Null;
    for _ in 0..300 {
        last = status(&b, &id).await;
        if last["ok"] != "ASSEMBLY_EXECUTING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["ok"], "ASSEMBLY_COMPLETED", "{last}");
    assert_eq!(
        last["warnings"],
        json!([
            "The instance running this Assembly stopped; another instance ran it again from its first step."
        ])
    );
    let url = last["results"]["i"][0]["ssl_url"]
        .as_str()
        .expect("result url");
    assert!(url.starts_with(&b.base), "{url}");
    let bytes = reqwest::get(url)
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..], BODY);
}

#[tokio::test]
async fn a_cancel_sent_to_one_instance_stops_the_run_on_the_other() {
    let redis = RedisServer::start();
    let shared = tempfile::tempdir().expect("dir");
    let a = start(shared.path(), &redis).await;
    let b = start(shared.path(), &redis).await;
    let (origin, mut events) = origin().await;

    let created = create(&a, &format!("http://{origin}/hang")).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    assert_eq!(
        next(&mut events).await,
        Some("opened"),
        "A never started the import"
    );
    let res = reqwest::Client::new()
        .delete(format!("{}/assemblies/{id}", b.base))
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.expect("json")["ok"],
        "ASSEMBLY_CANCELED"
    );
    // A dropped its import: the origin sees the connection close.
    assert_eq!(
        next(&mut events).await,
        Some("closed"),
        "the run on A was not stopped"
    );
    assert_eq!(status(&a, &id).await["ok"], "ASSEMBLY_CANCELED");
}
