//! A link import into this server's own tus endpoint is handed to the endpoint in process, not
//! sent back over loopback HTTP: counted by `ferry_companion_local_requests_total` in
//! `/metrics`, the stored bytes sha256-equal, the pre-create hook still refusing, pause /
//! resume / cancel from the progress socket still working. A foreign tus server (another
//! `ferry` on another port) and `--no-local-handoff` still go over HTTP. Everything is real
//! HTTP on loopback: the client, the origin, the progress socket, the hook receiver.

mod common;

use std::time::Duration;

use ferry_testkit::hooks::HookReceiver;
use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const SIZE: usize = 1_000_000;
const GATE: u64 = 300_000;

/// `POST /url/get` on `base` with `body`; the transfer's progress socket.
async fn import(base: &str, body: Value) -> Socket {
    let res = reqwest::Client::new()
        .post(format!("{base}/url/get"))
        .json(&body)
        .send()
        .await
        .expect("url/get");
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.expect("json");
    let token = answer["token"].as_str().expect("token");
    let url = format!("{}/api/{token}", base.replace("http://", "ws://"));
    tokio_tungstenite::connect_async(url)
        .await
        .expect("socket")
        .0
}

/// The next JSON frame (bounded).
async fn frame(ws: &mut Socket) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a frame in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = msg {
            return serde_json::from_str(text.as_str()).expect("JSON frame");
        }
    }
}

/// Frames until success or error: the last one.
async fn outcome(ws: &mut Socket) -> Value {
    loop {
        let f = frame(ws).await;
        if matches!(f["action"].as_str(), Some("success" | "error")) {
            return f;
        }
    }
}

/// Frames until one reports at least `bytes` uploaded.
async fn progress_at_least(ws: &mut Socket, bytes: u64) {
    loop {
        let f = frame(ws).await;
        assert_eq!(f["action"], "progress", "unexpected frame {f}");
        if f["payload"]["bytesUploaded"].as_u64() >= Some(bytes) {
            return;
        }
    }
}

async fn send(ws: &mut Socket, action: &str) {
    let text = json!({"action": action, "payload": {}}).to_string();
    ws.send(Message::Text(text.into())).await.expect("send");
}

/// What `ferry_companion_local_requests_total` says on `base`'s `/metrics`.
async fn local_requests(base: &str) -> u64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix("ferry_companion_local_requests_total "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no local requests counter in {text}"))
}

async fn stored(url: &str) -> Vec<u8> {
    let res = reqwest::get(url).await.expect("GET");
    assert_eq!(res.status(), 200, "{url}");
    res.bytes().await.expect("body").to_vec()
}

#[tokio::test]
async fn an_import_into_its_own_tus_endpoint_is_handed_over_in_process() {
    let bytes = random_bytes(SIZE);
    let origin = Origin::start(bytes.clone(), OriginOptions::default()).await;
    let server = common::serve(&["--allow-local-urls"]).await;
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": format!("{}/files/", server.base), "size": SIZE, "metadata": {"name": "own.bin"}}),
    )
    .await;
    let done = outcome(&mut ws).await;
    assert_eq!(done["action"], "success", "{done}");
    let url = done["payload"]["url"].as_str().expect("url");
    assert!(url.starts_with(&format!("{}/files/", server.base)), "{url}");
    assert_eq!(sha256_hex(&stored(url).await), sha256_hex(&bytes));
    // The creation and the one PATCH went in process.
    assert_eq!(local_requests(&server.base).await, 2);
}

#[tokio::test]
async fn with_no_local_handoff_the_same_import_goes_over_http() {
    let bytes = random_bytes(SIZE);
    let origin = Origin::start(bytes.clone(), OriginOptions::default()).await;
    let server = common::serve(&["--allow-local-urls", "--no-local-handoff"]).await;
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": format!("{}/files/", server.base)}),
    )
    .await;
    let done = outcome(&mut ws).await;
    assert_eq!(done["action"], "success", "{done}");
    let url = done["payload"]["url"].as_str().expect("url");
    assert_eq!(sha256_hex(&stored(url).await), sha256_hex(&bytes));
    assert_eq!(local_requests(&server.base).await, 0);
}

#[tokio::test]
async fn a_foreign_tus_endpoint_is_still_reached_over_http() {
    let bytes = random_bytes(SIZE);
    let origin = Origin::start(bytes.clone(), OriginOptions::default()).await;
    let foreign = common::serve(&[]).await;
    let endpoint = format!("{}/files/", foreign.base);
    let server = common::serve(&["--allow-local-urls", "--upload-urls", &endpoint]).await;
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": endpoint}),
    )
    .await;
    let done = outcome(&mut ws).await;
    assert_eq!(done["action"], "success", "{done}");
    let url = done["payload"]["url"].as_str().expect("url");
    assert!(url.starts_with(&endpoint), "{url}");
    assert_eq!(sha256_hex(&stored(url).await), sha256_hex(&bytes));
    assert_eq!(local_requests(&server.base).await, 0);
    assert_eq!(local_requests(&foreign.base).await, 0);
}

#[tokio::test]
async fn the_pre_create_hook_still_refuses_an_in_process_import() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"RejectUpload": true, "HTTPResponse": {"StatusCode": 403, "Body": "closed"}}),
    );
    let origin = Origin::start(random_bytes(SIZE), OriginOptions::default()).await;
    let server = common::serve(&[
        "--allow-local-urls",
        "--hooks-http",
        &receiver.url(),
        "--hooks-enabled-events",
        "pre-create",
        "--hooks-http-retry",
        "0",
    ])
    .await;
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": format!("{}/files/", server.base), "metadata": {"name": "refused.bin"}}),
    )
    .await;
    let done = outcome(&mut ws).await;
    assert_eq!(done["action"], "error", "{done}");
    assert_eq!(
        done["payload"]["error"]["message"], "upload failed: tus POST answered 403",
        "{done}"
    );
    let asked = receiver.of("pre-create");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let event = &asked[0]["Event"];
    assert_eq!(event["Upload"]["MetaData"]["name"], "refused.bin");
    assert_eq!(event["HTTPRequest"]["Method"], "POST");
    assert_eq!(event["HTTPRequest"]["URI"], "/files/");
    assert_eq!(local_requests(&server.base).await, 1);
}

#[tokio::test]
async fn pause_and_resume_of_an_in_process_import_continue_from_the_paused_byte() {
    let bytes = random_bytes(SIZE);
    let gated = OriginOptions {
        gate_after: Some(GATE),
        ..OriginOptions::default()
    };
    let origin = Origin::start(bytes.clone(), gated).await;
    let server = common::serve(&["--allow-local-urls"]).await;
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": format!("{}/files/", server.base)}),
    )
    .await;
    progress_at_least(&mut ws, GATE).await;
    send(&mut ws, "pause").await;
    send(&mut ws, "resume").await;
    let done = outcome(&mut ws).await;
    assert_eq!(done["action"], "success", "{done}");
    let url = done["payload"]["url"].as_str().expect("url");
    assert_eq!(sha256_hex(&stored(url).await), sha256_hex(&bytes));
    // Fetched again from where the endpoint stood, which kept what the paused PATCH carried.
    assert_eq!(origin.gets(), 2);
    let ranges = origin.ranges();
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    let from: u64 = ranges[0]
        .strip_prefix("bytes=")
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse().ok())
        .expect("a bytes=N- range");
    assert!(from >= GATE / 2, "resumed from {from}");
    // POST and PATCH, then HEAD and PATCH after the resume: all in process.
    assert_eq!(local_requests(&server.base).await, 4);
}

#[tokio::test]
async fn cancelling_an_in_process_import_terminates_its_upload() {
    let origin = Origin::start(
        random_bytes(SIZE),
        OriginOptions {
            gate_after: Some(GATE),
            ..OriginOptions::default()
        },
    )
    .await;
    let server = common::serve(&["--allow-local-urls"]).await;
    // The client resumes an upload it created itself, so the test knows its URL.
    let client = reqwest::Client::new();
    let location = common::create(&client, &server.base, SIZE).await;
    let upload = reqwest::Url::parse(&server.base)
        .expect("base")
        .join(&location)
        .expect("join");
    let mut ws = import(
        &server.base,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": format!("{}/files/", server.base), "uploadUrl": upload.as_str()}),
    )
    .await;
    progress_at_least(&mut ws, GATE).await;
    send(&mut ws, "cancel").await;
    let mut status = 0;
    for _ in 0..250 {
        let head = client
            .head(upload.clone())
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .expect("HEAD");
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
    // HEAD, PATCH and the termination went in process.
    assert_eq!(local_requests(&server.base).await, 3);
}
