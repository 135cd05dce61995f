//! Pause, resume and cancel from the progress socket for each protocol (bytes exact at the
//! end), a reconnecting socket getting the latest state at once, and jobs dropped when no
//! socket comes.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::json;

const SIZE: usize = 1_000_000;
const GATE: u64 = 300_000;

fn gated(ranges: bool) -> OriginOptions {
    OriginOptions {
        gate_after: Some(GATE),
        ranges,
        ..OriginOptions::default()
    }
}

async fn pause_resume_tus(ranges: bool) -> Origin {
    let data = random_bytes(SIZE);
    let origin = Origin::start(data.clone(), gated(ranges)).await;
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.origin()]), no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "pause").await;
    send_action(&mut ws, "resume").await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let stored = download(last["payload"]["url"].as_str().expect("url")).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    assert_eq!(
        origin.gets(),
        2,
        "the source was fetched again after the pause"
    );
    origin
}

#[tokio::test]
async fn tus_pause_resume_continues_from_the_paused_byte_with_range() {
    let origin = pause_resume_tus(true).await;
    let ranges = origin.ranges();
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    let from: u64 = ranges[0]
        .strip_prefix("bytes=")
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse().ok())
        .expect("bytes=N-");
    assert!(from > 0 && from <= GATE, "resumed from {from}");
}

#[tokio::test]
async fn tus_pause_resume_without_source_ranges_skips_to_the_offset() {
    pause_resume_tus(false).await;
}

#[tokio::test]
async fn multipart_pause_resume_restarts_and_is_byte_exact() {
    let data = random_bytes(SIZE);
    let origin = Origin::start(data.clone(), gated(true)).await;
    let form = FormDest::start().await;
    let companion = companion(config(&[form.server.url("")]), no_names()).await;
    let body = json!({"url": origin.file_url(), "protocol": "multipart", "endpoint": form.server.url("/upload"), "metadata": {"name": "m.bin"}});
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "pause").await;
    send_action(&mut ws, "resume").await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let stored = download(
        &form
            .server
            .url(last["payload"]["url"].as_str().expect("url")),
    )
    .await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    assert_eq!(origin.gets(), 2);
}

#[tokio::test]
async fn tus_cancel_terminates_the_destination_upload() {
    let origin = Origin::start(random_bytes(SIZE), gated(true)).await;
    let tus = TusDest::start().await;
    let client = reqwest::Client::new();
    // The client resumes an upload it created itself, so the test knows its URL.
    let created = client
        .post(tus.endpoint())
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", SIZE)
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let location = created.headers()["location"]
        .to_str()
        .expect("location")
        .to_owned();
    let upload_url = reqwest::Url::parse(&tus.endpoint())
        .expect("url")
        .join(&location)
        .expect("join");
    let (companion, state) = companion_with_state(config(&[tus.origin()]), no_names()).await;
    let body = json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint(), "uploadUrl": upload_url.as_str()});
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "cancel").await;
    let mut status = 0;
    for _ in 0..100 {
        let head = client
            .head(upload_url.clone())
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .expect("head");
        status = head.status().as_u16();
        if status == 404 || status == 410 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        status == 404 || status == 410,
        "upload still there: {status}"
    );
    // The counters the server's /metrics renders.
    let metrics = state.metrics().render();
    assert!(
        metrics.contains("ferry_companion_transfers_cancelled_total 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn multipart_cancel_aborts_the_request_and_publishes_nothing() {
    let origin = Origin::start(random_bytes(SIZE), gated(true)).await;
    let form = FormDest::start().await;
    let companion = companion(config(&[form.server.url("")]), no_names()).await;
    let body = json!({"url": origin.file_url(), "protocol": "multipart", "endpoint": form.server.url("/upload")});
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "cancel").await;
    origin.open_gate();
    // After a cancel the transfer publishes nothing more; the job is gone once kept frames expire.
    let next = tokio::time::timeout(Duration::from_millis(500), next_frame_raw(&mut ws)).await;
    assert!(next.is_err(), "unexpected frame after cancel: {next:?}");
    assert_eq!(origin.gets(), 1);
}

async fn next_frame_raw(ws: &mut Socket) -> serde_json::Value {
    next_frame(ws).await
}

#[tokio::test]
async fn a_reconnecting_socket_gets_the_latest_state_at_once() {
    let data = random_bytes(SIZE);
    let origin = Origin::start(data.clone(), gated(true)).await;
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.origin()]), no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    let mut first = socket(&companion, &token).await;
    progress_at_least(&mut first, GATE).await;
    drop(first);
    let mut second = socket(&companion, &token).await;
    // The origin is gated, so no new progress can come: a frame is the replayed state.
    let frame = tokio::time::timeout(Duration::from_secs(5), next_frame(&mut second))
        .await
        .expect("state at once");
    assert_eq!(frame["action"], "progress");
    assert_eq!(frame["payload"]["bytesUploaded"], GATE);
    origin.open_gate();
    let (last, _) = finish(&mut second).await;
    assert_eq!(last["action"], "success");
    // And after the end, a new socket gets the success frame at once.
    let mut third = socket(&companion, &token).await;
    let frame = tokio::time::timeout(Duration::from_secs(5), next_frame(&mut third))
        .await
        .expect("state at once");
    assert_eq!(frame, last);
    let stored = download(last["payload"]["url"].as_str().expect("url")).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

// On a paused clock: the test's sleep passes the 100 ms socket wait without real waiting, and
// the job's timer, being earlier, has always fired by the time the test wakes.
#[tokio::test(start_paused = true)]
async fn a_job_without_socket_is_dropped_and_never_fetches() {
    let origin = Origin::start(random_bytes(1000), OriginOptions::default()).await;
    let tus = TusDest::start().await;
    let mut cfg = config(&[tus.origin()]);
    cfg.socket_wait = Duration::from_millis(100);
    let companion = companion(cfg, no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let url = format!("ws://{}/api/{token}", companion.addr);
    assert!(
        tokio_tungstenite::connect_async(url).await.is_err(),
        "job still there"
    );
    assert_eq!(origin.gets(), 0);
    let unknown = format!("ws://{}/api/{}", companion.addr, "0".repeat(48));
    assert!(tokio_tungstenite::connect_async(unknown).await.is_err());
}

#[tokio::test]
async fn oversized_socket_messages_close_only_that_socket() {
    let data = random_bytes(SIZE);
    let origin = Origin::start(data.clone(), gated(true)).await;
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.origin()]), no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    let mut good = socket(&companion, &token).await;
    let mut bad = socket(&companion, &token).await;
    progress_at_least(&mut good, GATE).await;
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    // Many small junk messages are read and ignored...
    for _ in 0..200 {
        bad.send(Message::Text("{\"action\":\"nonsense\"}".into()))
            .await
            .expect("a small message is accepted");
    }
    // ...but one over the cap closes that socket, while the transfer is still held at the gate.
    // The send itself may fail: the server can close while the message is still being written.
    let flood = "x".repeat(64 * 1024);
    let _ = bad.send(Message::Text(flood.into())).await;
    closed(&mut bad).await;
    origin.open_gate();
    let (last, _) = finish(&mut good).await;
    assert_eq!(last["action"], "success");
    let stored = download(last["payload"]["url"].as_str().expect("url")).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

/// Reads `ws` until the server closes it (frames sent before the close are skipped); fails
/// after 5 s.
async fn closed(ws: &mut Socket) {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    let read_to_end = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read_to_end)
        .await
        .expect("the server closed the socket");
}

/// An origin whose file changes after the first GET: the first answer (`ETag: "v1"`) holds
/// after [`GATE`] bytes; later ones serve other bytes under `ETag: "v2"`, honouring `If-Range`
/// as HTTP says (a validator that no longer matches gets the whole new file). Records each
/// GET's `If-Range`.
async fn changing_origin() -> (ferry_testkit::TestServer, Arc<Mutex<Vec<Option<String>>>>) {
    use axum::http::{HeaderMap, StatusCode, header};
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = seen.clone();
    let file = move |headers: HeaderMap| {
        let log = log.clone();
        async move {
            let if_range = headers
                .get(header::IF_RANGE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let first = {
                let mut log = log.lock().expect("log");
                log.push(if_range.clone());
                log.len() == 1
            };
            let old = bytes::Bytes::from(random_bytes(SIZE));
            if first {
                let head = futures_util::stream::iter([Ok::<_, std::io::Error>(
                    old.slice(..GATE as usize),
                )]);
                let held = futures_util::StreamExt::chain(head, futures_util::stream::pending());
                let headers = [
                    (header::ETAG, "\"v1\"".to_owned()),
                    (header::CONTENT_LENGTH, SIZE.to_string()),
                ];
                return (StatusCode::OK, headers, axum::body::Body::from_stream(held));
            }
            assert_ne!(
                if_range.as_deref(),
                Some("\"v2\""),
                "a validator never served"
            );
            let headers = [
                (header::ETAG, "\"v2\"".to_owned()),
                (header::CONTENT_LENGTH, SIZE.to_string()),
            ];
            (StatusCode::OK, headers, axum::body::Body::from(old))
        }
    };
    let router = axum::Router::new().route("/file.bin", axum::routing::get(file));
    (ferry_testkit::TestServer::start(router).await, seen)
}

#[tokio::test]
async fn a_source_that_changed_while_paused_fails_instead_of_splicing() {
    let (origin, seen) = changing_origin().await;
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.origin()]), no_names()).await;
    let body =
        json!({"url": origin.url("/file.bin"), "protocol": "tus", "endpoint": tus.endpoint()});
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "pause").await;
    send_action(&mut ws, "resume").await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(
        last,
        json!({"action": "error", "payload": {"error": {"message": "Upload error: the source changed during the transfer"}}})
    );
    assert_eq!(
        *seen.lock().expect("log"),
        vec![None, Some("\"v1\"".to_owned())],
        "the resumed GET carries the first answer's validator"
    );
}

/// An origin that ignores `If-Range` answers the resumed GET with 206 from the changed file
/// (`ETag: "v2"`): the transfer fails instead of storing the old head and the new tail as one.
#[tokio::test]
async fn a_206_from_a_changed_source_that_ignores_if_range_fails_instead_of_splicing() {
    let opts = OriginOptions {
        changes_to: Some(random_bytes(SIZE)),
        ..gated(true)
    };
    let origin = Origin::start(random_bytes(SIZE), opts).await;
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.origin()]), no_names()).await;
    let body = json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()});
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, GATE).await;
    send_action(&mut ws, "pause").await;
    send_action(&mut ws, "resume").await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(
        last,
        json!({"action": "error", "payload": {"error": {"message": "Upload error: the source changed during the transfer"}}})
    );
    assert_eq!(
        origin.gets(),
        2,
        "one resumed GET, answered 206 from the new file"
    );
    assert_eq!(origin.ranges().len(), 1, "{:?}", origin.ranges());
}
