//! A real hook receiver on 127.0.0.1:0 for the tests: it records every request (headers, JSON
//! body, arrival time) and answers with what the test's handler returns.

#![allow(dead_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use ferry_hooks::{HookEvent, HookType, HooksConfig, HttpRequestInfo, Upload};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub headers: HeaderMap,
    pub body: Value,
    pub at: Instant,
}

type Handler = Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Response> + Send>> + Send + Sync>;

#[derive(Clone)]
struct ReceiverState {
    handler: Handler,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    hits: Arc<watch::Sender<usize>>,
}

/// A running receiver.
pub struct Receiver {
    pub url: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    hits: Arc<watch::Sender<usize>>,
}

impl Receiver {
    /// Starts a receiver answering each hook request with `handler(body)`.
    pub async fn start<F, Fut>(handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |body| Box::pin(handler(body)));
        let state = ReceiverState {
            handler,
            recorded: Arc::default(),
            hits: Arc::new(watch::Sender::new(0)),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind receiver");
        let addr = listener.local_addr().expect("receiver address");
        let app = Router::new()
            .route("/hooks", post(receive))
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}/hooks"),
            recorded: state.recorded,
            hits: state.hits,
        }
    }

    /// A receiver answering every hook with this JSON.
    pub async fn answering(json: &'static str) -> Self {
        Self::start(move |_| async move { json_answer(StatusCode::OK, json) }).await
    }

    /// Everything received so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().expect("lock").clone()
    }

    /// Requests received so far (counted on arrival, before the answer).
    pub fn hits(&self) -> usize {
        *self.hits.borrow()
    }

    /// Waits until `n` requests have arrived (at most 10 s).
    pub async fn wait_for_hits(&self, n: usize) {
        let mut hits = self.hits.subscribe();
        tokio::time::timeout(Duration::from_secs(10), hits.wait_for(|h| *h >= n))
            .await
            .expect("receiver hits in time")
            .expect("receiver alive");
    }
}

async fn receive(State(state): State<ReceiverState>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).expect("hook body is JSON");
    state.recorded.lock().expect("lock").push(Recorded {
        headers,
        body: body.clone(),
        at: Instant::now(),
    });
    state.hits.send_modify(|n| *n += 1);
    (state.handler)(body).await
}

/// `status` with a JSON body and `Content-Type: application/json`.
pub fn json_answer(status: StatusCode, json: &str) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        json.to_owned(),
    )
        .into_response()
}

/// A URL nothing listens on: a port that was just bound and released.
pub async fn closed_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("address");
    drop(listener);
    format!("http://{addr}/hooks")
}

/// Settings for tests: every hook enabled, short waits.
pub fn config(url: &str) -> HooksConfig {
    HooksConfig {
        http: Some(url.to_owned()),
        enabled_events: ferry_hooks::EnabledEvents::all(),
        http_retry: 2,
        http_backoff: Duration::from_millis(50),
        timeout: Duration::from_secs(5),
        ..HooksConfig::default()
    }
}

/// A hook of type `hook` about upload `id` with no request details.
pub fn event(hook: HookType, id: &str) -> HookEvent {
    HookEvent::new(
        hook,
        Upload {
            id: id.to_owned(),
            size: Some(10),
            ..Upload::default()
        },
        HttpRequestInfo::default(),
    )
}
