//! Shared helpers of the companion's integration tests, the one place to look for them: here the
//! companion on `127.0.0.1:0` with a fixed-table resolver, real tus and form destinations, and a
//! websocket client; [`providers`] the provider setup (fake Google and Instagram, the OAuth walk);
//! [`s3`] a Garage bucket as the S3 destination and the `/s3/*` route fixture; [`ratelimit`] the
//! rate-limit checks every provider family runs; [`rotating`] the checks of the providers whose
//! refresh tokens work once.
#![allow(dead_code)]

pub mod providers;
pub mod ratelimit;
pub mod rotating;
pub mod s3;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use ferry_companion::egress::StaticResolver;
use ferry_companion::{AppState, CompanionConfig};
use ferry_testkit::TestServer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A companion for tests: allowlist = the given destinations, short timers.
pub async fn companion(config: CompanionConfig, resolver: StaticResolver) -> TestServer {
    companion_with_state(config, resolver).await.0
}

/// [`companion`] and its state, whose transfer counters the server's `/metrics` shows.
pub async fn companion_with_state(
    config: CompanionConfig,
    resolver: StaticResolver,
) -> (TestServer, AppState) {
    let state = AppState::with_resolver(config, Arc::new(resolver)).expect("valid config");
    let server = TestServer::start(ferry_companion::routes(state.clone())).await;
    (server, state)
}

/// Config allowing `destinations`, local sources, and fast retries.
pub fn config(destinations: &[String]) -> CompanionConfig {
    CompanionConfig {
        allow_local_urls: true,
        upload_urls: destinations.to_vec(),
        retry_delays: vec![
            Duration::ZERO,
            Duration::from_millis(50),
            Duration::from_millis(100),
        ],
        // Tests hold transfers at a gate while they pause, reconnect or cancel; on a loaded
        // machine that can pass 5 s, so only the stall test itself uses a short timeout.
        stall_timeout: Duration::from_secs(30),
        ..CompanionConfig::default()
    }
}

/// A resolver knowing nothing.
pub fn no_names() -> StaticResolver {
    StaticResolver::default()
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().expect("test ip")
}

/// A real tus endpoint at `/files/` storing in a temp dir.
pub struct TusDest {
    pub server: TestServer,
    _dir: tempfile::TempDir,
}

impl TusDest {
    pub async fn start() -> Self {
        Self::start_with(|r| r).await
    }

    /// With a wrapper around the router (e.g. `fail_first`).
    pub async fn start_with(wrap: impl FnOnce(axum::Router) -> axum::Router) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = ferry_tus::store::fs::FsStore::open(dir.path().to_owned())
            .await
            .expect("store");
        let state = ferry_tus::TusState::new(
            Arc::new(store),
            ferry_tus::TusConfig {
                max_uploads_per_client: 0,
                ..ferry_tus::TusConfig::default()
            },
        );
        let server = TestServer::start(wrap(ferry_tus::router(state))).await;
        Self { server, _dir: dir }
    }

    pub fn endpoint(&self) -> String {
        self.server.url("/files/")
    }

    pub fn origin(&self) -> String {
        self.server.url("")
    }
}

/// A real form endpoint at `/upload`.
pub struct FormDest {
    pub server: TestServer,
    _dir: tempfile::TempDir,
}

impl FormDest {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let state = ferry_form::FormState::open(ferry_form::FormConfig {
            dir: dir.path().to_owned(),
            max_size: None,
            base_path: "/upload".to_owned(),
        })
        .await
        .expect("form store");
        let server = TestServer::start(ferry_form::router(state)).await;
        Self { server, _dir: dir }
    }
}

/// `POST {base}{path}` with a JSON body: (status, JSON answer).
pub async fn post_json(base: &TestServer, path: &str, body: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(base.url(path))
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    let json = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, json)
}

/// Starts a transfer: the token.
pub async fn start_transfer(companion: &TestServer, body: Value) -> String {
    let (status, answer) = post_json(companion, "/url/get", body).await;
    assert_eq!(status, 200, "url/get answered {answer}");
    answer["token"].as_str().expect("token").to_owned()
}

/// Opens the progress socket of `token`.
pub async fn socket(companion: &TestServer, token: &str) -> Socket {
    let url = format!("ws://{}/api/{token}", companion.addr);
    let (ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket");
    ws
}

/// Next JSON frame (fails after 20 s).
pub async fn next_frame(ws: &mut Socket) -> Value {
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

/// Reads frames until success or error; returns (the final frame, the progress and waiting
/// frames before it).
pub async fn finish(ws: &mut Socket) -> (Value, Vec<Value>) {
    let mut progress = Vec::new();
    loop {
        let f = next_frame(ws).await;
        match f["action"].as_str() {
            Some("progress" | "waiting") => progress.push(f),
            _ => return (f, progress),
        }
    }
}

/// Reads frames until a progress frame reports at least `bytes`.
pub async fn progress_at_least(ws: &mut Socket, bytes: u64) -> Value {
    loop {
        let f = next_frame(ws).await;
        if f["action"] == "progress" && f["payload"]["bytesUploaded"].as_u64() >= Some(bytes) {
            return f;
        }
        assert_eq!(f["action"], "progress", "unexpected frame {f}");
    }
}

/// Sends a control action.
pub async fn send_action(ws: &mut Socket, action: &str) {
    let text = json!({"action": action, "payload": {}}).to_string();
    ws.send(Message::Text(text.into())).await.expect("send");
}

/// GETs `url` and returns the body.
pub async fn download(url: &str) -> Vec<u8> {
    let resp = reqwest::get(url).await.expect("download");
    assert!(
        resp.status().is_success(),
        "download {url}: {}",
        resp.status()
    );
    resp.bytes().await.expect("body").to_vec()
}
