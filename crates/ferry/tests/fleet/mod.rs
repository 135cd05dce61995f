//! The Redis fleet the scale tests run: Redis, a destination `ferry` (its tus endpoint on disk),
//! a slow loopback origin serving random bytes, companion instances on that Redis with a
//! takeover window, and the progress-socket readers (until a percentage, until success).
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub const SIZE: usize = 24 * 1024 * 1024;
/// The origin's pace: 64 KiB every 12 ms, about 5 MiB/s, so a transfer lasts ~5 s.
pub const CHUNK: usize = 64 * 1024;
pub const PACE: Duration = Duration::from_millis(12);
/// What one instance may have read from the origin beyond what reached the destination when it
/// died: its read-ahead and socket buffers, far below a second copy of the file.
pub const SLACK: u64 = 8 * 1024 * 1024;

pub struct Fleet {
    pub redis: RedisServer,
    pub dest: Ferry,
    pub origin: Origin,
    pub data: Vec<u8>,
    /// More flags for every instance.
    pub extra: Vec<String>,
    /// Data directories of the destination and the instances, removed when the test ends.
    pub dirs: Vec<tempfile::TempDir>,
}

/// Redis, the destination, a slow origin serving SIZE random bytes.
pub async fn fleet() -> Fleet {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().display().to_string();
    let dest = Ferry::start(
        env!("CARGO_BIN_EXE_ferry"),
        ["--data-dir", &d, "--ui-dir", &d],
    )
    .await;
    let data = random_bytes(SIZE);
    let origin = Origin::start(
        data.clone(),
        OriginOptions {
            chunk: CHUNK,
            pace: Some(PACE),
            ..OriginOptions::default()
        },
    )
    .await;
    Fleet {
        redis,
        dest,
        origin,
        data,
        extra: Vec::new(),
        dirs: vec![dir],
    }
}

impl Fleet {
    /// A companion instance on the fleet's Redis.
    pub async fn instance(&mut self, takeover_secs: u64) -> Ferry {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display().to_string();
        let ferry = start_instance(
            Path::new(&d),
            &self.redis.url(),
            &format!("{}/files/", self.dest.base),
            takeover_secs,
            &self.extra,
        )
        .await;
        self.dirs.push(dir);
        ferry
    }

    /// `POST /url/get` on `on`: the origin's file into the destination's tus endpoint.
    pub async fn start_import(&self, on: &Ferry) -> String {
        self.import_with(
            on,
            json!({
                "url": self.origin.file_url(),
                "protocol": "tus",
                "endpoint": format!("{}/files/", self.dest.base),
                "size": SIZE,
                "metadata": {"name": "big.bin"},
            }),
        )
        .await
    }

    /// `POST /url/get` on `on` with `body`; returns the transfer token.
    pub async fn import_with(&self, on: &Ferry, body: Value) -> String {
        let res = reqwest::Client::new()
            .post(format!("{}/url/get", on.base))
            .json(&body)
            .send()
            .await
            .expect("url/get");
        assert_eq!(res.status(), 200, "{:?}", res.text().await);
        let body: Value = res.json().await.expect("json");
        body["token"].as_str().expect("token").to_owned()
    }

    /// The stored upload at `url` equals the origin's bytes.
    pub async fn assert_stored(&self, url: &str) {
        let got = reqwest::Client::new()
            .get(url)
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .expect("GET")
            .bytes()
            .await
            .expect("body");
        assert_eq!(got.len(), self.data.len());
        assert_eq!(sha256_hex(&got), sha256_hex(&self.data));
    }

    /// A field of the transfer's record in Redis (`h.` names a checkpoint hint).
    pub fn record(&self, token: &str, field: &str) -> String {
        self.redis
            .cli(&["HGET", &format!("ferry:{{xf:{token}}}:rec"), field])
            .trim()
            .to_owned()
    }
}

pub async fn start_instance(
    data: &Path,
    redis: &str,
    dest_files: &str,
    takeover: u64,
    extra: &[String],
) -> Ferry {
    let d = data.display().to_string();
    let takeover = takeover.to_string();
    let mut args: Vec<String> = [
        "--data-dir",
        &d,
        "--ui-dir",
        &d,
        "--allow-local-urls",
        "--upload-urls",
        dest_files,
        "--redis-url",
        redis,
        "--transfer-takeover",
        &takeover,
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend_from_slice(extra);
    Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await
}

pub async fn socket(on: &Ferry, token: &str) -> Socket {
    let url = format!("{}/api/{token}", on.base.replace("http://", "ws://"));
    tokio_tungstenite::connect_async(url)
        .await
        .expect("progress socket")
        .0
}

/// The next frame within `within`.
pub async fn next_frame(ws: &mut Socket, within: Duration) -> Value {
    loop {
        let msg = tokio::time::timeout(within, ws.next())
            .await
            .expect("a frame in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = msg {
            return serde_json::from_str(text.as_str()).expect("json frame");
        }
    }
}

/// Reads frames until progress reaches `percent`; returns bytes uploaded then.
pub async fn until_progress(ws: &mut Socket, percent: f64) -> u64 {
    loop {
        let frame = next_frame(ws, Duration::from_secs(30)).await;
        match frame["action"].as_str() {
            Some("progress") => {
                let p = &frame["payload"];
                let pct: f64 = p["progress"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0.0);
                if pct >= percent {
                    return p["bytesUploaded"].as_u64().unwrap_or(0);
                }
            }
            Some("error") => panic!("transfer failed: {frame}"),
            Some("success") => panic!("finished before {percent}%"),
            _ => {}
        }
    }
}

/// Reads frames until success; returns the uploaded file's URL.
pub async fn until_success(ws: &mut Socket, within: Duration) -> String {
    success_payload(ws, within).await["url"]
        .as_str()
        .expect("url")
        .to_owned()
}

/// Reads frames until success; returns the success payload.
pub async fn success_payload(ws: &mut Socket, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = next_frame(ws, left.max(Duration::from_millis(1))).await;
        match frame["action"].as_str() {
            Some("success") => return frame["payload"].clone(),
            Some("error") => panic!("transfer failed: {frame}"),
            _ => {}
        }
    }
}

pub async fn send(ws: &mut Socket, action: &str) {
    ws.send(Message::Text(
        json!({ "action": action }).to_string().into(),
    ))
    .await
    .expect("send");
}
