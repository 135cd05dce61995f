//! A hook receiver as an application would run one: an HTTP endpoint on `127.0.0.1:0` that
//! records every hook request (tusd v2's JSON) and answers each hook type as the test says
//! (a JSON answer, a delay, or a number of failures first), so tests drive Ferry's hooks over
//! real HTTP. It knows the wire format only as JSON values, not through Ferry's types, so a
//! test checks what is really sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use tokio::sync::Notify;

use crate::TestServer;

/// How the receiver answers one hook type.
#[derive(Debug, Clone, Default)]
struct Script {
    /// The JSON answer; `{}` when unset.
    answer: Option<Value>,
    /// Wait this long before answering.
    delay: Option<Duration>,
    /// Answer this many requests with 500 first.
    failures: u32,
}

#[derive(Debug, Default)]
struct Inner {
    received: Mutex<Vec<Value>>,
    scripts: Mutex<HashMap<String, Script>>,
    /// Requests answered with a scripted failure, per hook type.
    failed: Mutex<HashMap<String, u32>>,
    arrived: Notify,
}

/// A recording hook receiver; stopped when dropped.
#[derive(Debug)]
pub struct HookReceiver {
    inner: Arc<Inner>,
    server: TestServer,
}

impl HookReceiver {
    /// Starts the receiver; every hook is answered `{}` until told otherwise.
    pub async fn start() -> Self {
        let inner = Arc::new(Inner::default());
        let router = Router::new()
            .route("/hooks", post(receive))
            .with_state(inner.clone());
        let server = TestServer::start(router).await;
        Self { inner, server }
    }

    /// The URL to give `--hooks-http`.
    pub fn url(&self) -> String {
        self.server.url("/hooks")
    }

    /// Answers hook `hook` (`"pre-create"`, ...) with this JSON.
    pub fn answer(&self, hook: &str, answer: Value) {
        self.script(hook, |s| s.answer = Some(answer));
    }

    /// Waits `delay` before answering hook `hook`.
    pub fn delay(&self, hook: &str, delay: Duration) {
        self.script(hook, |s| s.delay = Some(delay));
    }

    /// Answers the next `times` requests of hook `hook` with a 500.
    pub fn fail(&self, hook: &str, times: u32) {
        self.script(hook, |s| s.failures = times);
    }

    fn script(&self, hook: &str, change: impl FnOnce(&mut Script)) {
        let mut scripts = self.inner.scripts.lock().unwrap_or_else(|p| p.into_inner());
        change(scripts.entry(hook.to_owned()).or_default());
    }

    /// Every hook request received so far, in order of arrival.
    pub fn received(&self) -> Vec<Value> {
        self.inner
            .received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The requests of hook `hook` received so far.
    pub fn of(&self, hook: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|event| event["Type"] == hook)
            .collect()
    }

    /// How many requests of hook `hook` were answered with a scripted failure.
    pub fn failed(&self, hook: &str) -> u32 {
        let failed = self.inner.failed.lock().unwrap_or_else(|p| p.into_inner());
        failed.get(hook).copied().unwrap_or(0)
    }

    /// Waits (at most `within`) until `count` requests of hook `hook` arrived, and returns
    /// them; panics with what did arrive otherwise.
    pub async fn wait_for(&self, hook: &str, count: usize, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let arrived = self.inner.arrived.notified();
            tokio::pin!(arrived);
            // Registered before looking, so an arrival in between is not missed.
            arrived.as_mut().enable();
            let found = self.of(hook);
            if found.len() >= count {
                return found;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                let types: Vec<_> = self.received().iter().map(|e| e["Type"].clone()).collect();
                panic!("{count} {hook} hooks did not arrive within {within:?}; got {types:?}");
            }
        }
    }
}

/// A URL where nothing listens: a receiver that is down.
pub async fn unreachable_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}/hooks")
}

async fn receive(State(inner): State<Arc<Inner>>, body: axum::body::Bytes) -> Response {
    let Ok(event) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let hook = event["Type"].as_str().unwrap_or_default().to_owned();
    let script = {
        let mut scripts = inner.scripts.lock().unwrap_or_else(|p| p.into_inner());
        let script = scripts.entry(hook.clone()).or_default();
        let now = script.clone();
        script.failures = script.failures.saturating_sub(1);
        now
    };
    inner
        .received
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(event);
    inner.arrived.notify_waiters();
    if let Some(delay) = script.delay {
        tokio::time::sleep(delay).await;
    }
    if script.failures > 0 {
        *inner
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(hook)
            .or_default() += 1;
        return (StatusCode::INTERNAL_SERVER_ERROR, "scripted failure").into_response();
    }
    let answer = script
        .answer
        .unwrap_or_else(|| Value::Object(Default::default()));
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}
