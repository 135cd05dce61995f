//! A Google Photos Picker import (`POST /google-picker/get`) across `ferry` instances on one
//! Redis: `kill -9` of the instance running it mid-transfer, and another instance takes it over
//! from the sealed pick in the shared transfer record (the page's access token is in Redis only
//! sealed under `--secret`), resuming the media download with `Range` at the destination's
//! offset; bytes compared by sha256.

use std::time::Duration;

use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::fake::google_photos::FakePhotos;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use tokio_tungstenite::tungstenite::Message;

const SIZE: usize = 12 * 1024 * 1024;

async fn next_frame(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .expect("a frame in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = msg {
            return serde_json::from_str(text.as_str()).expect("json frame");
        }
    }
}

#[tokio::test]
async fn a_photos_picker_import_survives_the_kill_of_its_instance() {
    let redis = RedisServer::start();
    let dest_dir = tempfile::tempdir().expect("tempdir");
    let d = dest_dir.path().display().to_string();
    let dest = Ferry::start(
        env!("CARGO_BIN_EXE_ferry"),
        ["--data-dir", &d, "--ui-dir", &d],
    )
    .await;
    let google = FakeGoogle::start("fleet-client", "unused").await;
    let photos = FakePhotos::start(google.state.clone()).await;
    let data = random_bytes(SIZE);
    let id = photos.state.add("fleet.jpg", "image/jpeg", data.clone());
    // 64 KiB every 12 ms: the import lasts ~2 s.
    photos.state.faults.slow_ms.store(12, Ordering::SeqCst);
    let access = google.state.issue_access_token();
    let url = format!("{}=d", photos.state.base_url(&id));

    let dest_files = format!("{}/files/", dest.base);
    let (api, content) = (photos.api_url(), photos.content_url());
    let mut dirs = Vec::new();
    let mut instances = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display().to_string();
        let args = [
            "--data-dir",
            &d,
            "--ui-dir",
            &d,
            "--upload-urls",
            &dest_files,
            "--redis-url",
            &redis.url(),
            "--transfer-takeover",
            "2",
            "--secret",
            "fleet-secret",
            "--google-picker",
            "--google-photos-picker-url",
            &api,
            "--google-photos-content-url",
            &content,
        ];
        instances.push(Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await);
        dirs.push(dir);
    }
    let b = instances.pop().expect("b");
    let a = instances.pop().expect("a");
    let res = reqwest::Client::new()
        .post(format!("{}/google-picker/get", a.base))
        .json(
            &json!({"platform": "photos", "accessToken": access, "fileId": id, "url": url,
            "protocol": "tus", "endpoint": dest_files, "size": SIZE,
            "metadata": {"name": "fleet.jpg"}}),
        )
        .send()
        .await
        .expect("google-picker/get");
    assert_eq!(res.status(), 200);
    let token = res.json::<Value>().await.expect("json")["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let record = redis.cli(&["HGETALL", &format!("ferry:{{xf:{token}}}:rec")]);
    assert!(record.contains("google_picker"), "{record}");
    assert!(
        !record.contains(&access),
        "the access token is sealed in the record"
    );
    assert!(!record.contains(&url), "so is the media URL");

    let ws_url = format!("{}/api/{token}", b.base.replace("http://", "ws://"));
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url)
        .await
        .expect("progress socket");
    loop {
        let frame = next_frame(&mut ws).await;
        let pct: f64 = frame["payload"]["progress"]
            .as_str()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        assert_eq!(frame["action"], "progress", "{frame}");
        if pct >= 40.0 {
            break;
        }
    }
    a.kill9();
    let done = loop {
        let frame = next_frame(&mut ws).await;
        match frame["action"].as_str() {
            Some("success") => break frame,
            Some("error") => panic!("transfer failed: {frame}"),
            _ => {}
        }
    };
    let stored = reqwest::get(done["payload"]["url"].as_str().expect("url"))
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    assert_eq!(
        photos.state.media_requests.load(Ordering::SeqCst),
        2,
        "A's download, then B's resumed one"
    );
}
