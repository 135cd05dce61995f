//! Origin servers with controllable misbehaviour for the companion's transfer tests: range
//! support on or off, a lying `Content-Length`, no length at all, a stall, a gate that holds
//! the first response part-way until the test opens it, redirects, a file that changes after
//! the first GET while `If-Range` is ignored; plus [`Sink`], a loopback
//! listener that only counts connections (the SSRF tests assert it sees none), and
//! [`fail_first`], a wrapper making a destination fail its first requests of one method.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::TestServer;

/// How the origin misbehaves.
#[derive(Clone, Debug)]
pub struct OriginOptions {
    /// Honour `Range: bytes=N-` with 206.
    pub ranges: bool,
    /// Send `Content-Length` (otherwise the body is chunked).
    pub content_length: bool,
    /// Announce this length but send the real bytes only (a lying source).
    pub lie_length: Option<u64>,
    /// After this many bytes, stop sending forever (every request).
    pub stall_after: Option<u64>,
    /// On the first GET only, hold after this many bytes until [`Origin::open_gate`].
    pub gate_after: Option<u64>,
    /// Answer HEAD with 405 (forces a GET fallback).
    pub no_head: bool,
    /// `Content-Disposition` to send.
    pub disposition: Option<String>,
    /// `Content-Type` to send.
    pub content_type: String,
    /// Bytes per body chunk.
    pub chunk: usize,
    /// Pause before each body chunk (a slow origin, so a transfer can be interrupted midway).
    pub pace: Option<std::time::Duration>,
    /// After the first GET, the file becomes these bytes: the first GET is served with
    /// `ETag: "v1"`, every later request with `ETag: "v2"` and the new bytes, and a `Range` is
    /// answered 206 from the new file even when `If-Range` names `"v1"` (an origin that ignores
    /// `If-Range`, as some do). Without it no `ETag` is sent.
    pub changes_to: Option<Vec<u8>>,
}

impl Default for OriginOptions {
    fn default() -> Self {
        Self {
            ranges: true,
            content_length: true,
            lie_length: None,
            stall_after: None,
            gate_after: None,
            no_head: false,
            disposition: None,
            content_type: "application/octet-stream".to_owned(),
            chunk: 16 * 1024,
            pace: None,
            changes_to: None,
        }
    }
}

struct Shared {
    data: Bytes,
    /// What the file becomes after the first GET ([`OriginOptions::changes_to`]).
    changed: Option<Bytes>,
    opts: OriginOptions,
    gets: AtomicUsize,
    redirects: AtomicUsize,
    served: std::sync::atomic::AtomicU64,
    gate: Notify,
    ranges: std::sync::Mutex<Vec<String>>,
}

/// A running origin serving one file at `/file` (and redirects at `/redirect?to=URL`).
pub struct Origin {
    pub server: TestServer,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Origin")
            .field("addr", &self.server.addr)
            .finish()
    }
}

impl Origin {
    /// Serves `data` with `opts` on `127.0.0.1:0`.
    pub async fn start(data: Vec<u8>, opts: OriginOptions) -> Self {
        Self::start_on("127.0.0.1:0", data, opts).await
    }

    /// Serves on a given local address (e.g. `127.0.0.2:0`).
    pub async fn start_on(addr: &str, data: Vec<u8>, opts: OriginOptions) -> Self {
        let shared = Arc::new(Shared {
            data: Bytes::from(data),
            changed: opts.changes_to.clone().map(Bytes::from),
            opts,
            gets: AtomicUsize::new(0),
            redirects: AtomicUsize::new(0),
            served: std::sync::atomic::AtomicU64::new(0),
            gate: Notify::new(),
            ranges: std::sync::Mutex::new(Vec::new()),
        });
        let router = Router::new()
            .route("/file", get(file).head(file))
            .route("/redirect", get(redirect))
            .with_state(shared.clone());
        let server = TestServer::start_on(addr, router).await;
        Self { server, shared }
    }

    /// URL of the file.
    pub fn file_url(&self) -> String {
        self.server.url("/file")
    }

    /// Lets the gated first response continue.
    pub fn open_gate(&self) {
        self.shared.gate.notify_one();
    }

    /// Number of GET requests served.
    pub fn gets(&self) -> usize {
        self.shared.gets.load(Ordering::SeqCst)
    }

    /// Body bytes handed to the network so far, over every GET.
    pub fn served(&self) -> u64 {
        self.shared.served.load(Ordering::SeqCst)
    }

    /// Number of redirects answered.
    pub fn redirects(&self) -> usize {
        self.shared.redirects.load(Ordering::SeqCst)
    }

    /// `Range` headers received, in order.
    pub fn ranges(&self) -> Vec<String> {
        self.shared
            .ranges
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }
}

async fn redirect(
    State(s): State<Arc<Shared>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    s.redirects.fetch_add(1, Ordering::SeqCst);
    let to = q.get("to").cloned().unwrap_or_default();
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

async fn file(State(s): State<Arc<Shared>>, method: Method, headers: HeaderMap) -> Response {
    let o = &s.opts;
    if method == Method::HEAD && o.no_head {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    // A changing file is the new one once a GET has been served; ETags only then.
    let changed = s.changed.is_some() && s.gets.load(Ordering::SeqCst) > 0;
    let data = match (&s.changed, changed) {
        (Some(new), true) => new.clone(),
        _ => s.data.clone(),
    };
    let total = data.len() as u64;
    let mut start = 0u64;
    let mut status = StatusCode::OK;
    let mut out = HeaderMap::new();
    if let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) {
        if let Ok(mut r) = s.ranges.lock() {
            r.push(range.to_owned());
        }
        let from = range
            .strip_prefix("bytes=")
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|n| n.parse::<u64>().ok());
        if let (true, Some(from)) = (o.ranges, from) {
            if from < total {
                start = from;
                status = StatusCode::PARTIAL_CONTENT;
                let range = format!("bytes {from}-{}/{total}", total - 1);
                out.insert(header::CONTENT_RANGE, range.parse().expect("header value"));
            }
        }
    }
    if o.ranges {
        out.insert(
            header::ACCEPT_RANGES,
            "bytes".parse().expect("header value"),
        );
    }
    out.insert(
        header::CONTENT_TYPE,
        o.content_type.parse().expect("content type"),
    );
    if let Some(d) = &o.disposition {
        out.insert(header::CONTENT_DISPOSITION, d.parse().expect("disposition"));
    }
    if s.changed.is_some() {
        let etag = if changed { "\"v2\"" } else { "\"v1\"" };
        out.insert(header::ETAG, etag.parse().expect("etag"));
    }
    let announced = o.lie_length.unwrap_or(total) - start;
    if o.content_length {
        out.insert(header::CONTENT_LENGTH, announced.into());
    }
    if method == Method::HEAD {
        return (status, out).into_response();
    }
    let first = s.gets.fetch_add(1, Ordering::SeqCst) == 0;
    let gate_at = if first { o.gate_after } else { None };
    let body = body_stream(s.clone(), data, start, gate_at);
    (status, out, Body::from_stream(body)).into_response()
}

fn body_stream(
    s: Arc<Shared>,
    data: Bytes,
    start: u64,
    gate_at: Option<u64>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::unfold((s, start, gate_at), move |(s, pos, gate)| {
        let data = data.clone();
        async move {
            let total = data.len() as u64;
            if pos >= total {
                return None;
            }
            if let Some(at) = s.opts.stall_after {
                if pos >= at {
                    std::future::pending::<()>().await;
                }
            }
            let mut gate = gate;
            if let Some(at) = gate {
                if pos >= at {
                    s.gate.notified().await;
                    gate = None;
                }
            }
            let mut end = (pos + s.opts.chunk as u64).min(total);
            for limit in [s.opts.stall_after, gate].into_iter().flatten() {
                if pos < limit {
                    end = end.min(limit);
                }
            }
            if let Some(pace) = s.opts.pace {
                tokio::time::sleep(pace).await;
            }
            let chunk = data.slice(pos as usize..end as usize);
            s.served.fetch_add(end - pos, Ordering::SeqCst);
            Some((Ok(chunk), (s, end, gate)))
        }
    })
}

/// A loopback listener that accepts and counts connections, answering nothing.
#[derive(Debug)]
pub struct Sink {
    pub addr: SocketAddr,
    count: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Sink {
    /// Listens on `127.0.0.1:0`.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind sink");
        let addr = listener.local_addr().expect("sink address");
        let count = Arc::new(AtomicUsize::new(0));
        let counter = count.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(conn);
            }
        });
        Self { addr, count, task }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Wraps `router` so its first `count` requests with `method` answer 503 (without reading the
/// body), for destinations that fail and then recover.
pub fn fail_first(router: Router, method: Method, count: usize) -> Router {
    let seen = Arc::new(AtomicUsize::new(0));
    router.layer(middleware::from_fn(move |req: Request, next: Next| {
        let seen = seen.clone();
        let method = method.clone();
        async move {
            if req.method() == method && seen.fetch_add(1, Ordering::SeqCst) < count {
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
            next.run(req).await
        }
    }))
}
