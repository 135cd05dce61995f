//! Shared helpers of the tus integration tests: an endpoint on a real fs store served on
//! `127.0.0.1:0` (with connection info, as the binary serves it), and table-driven cases.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use ferry_tus::store::fs::FsStore;
use ferry_tus::{TusConfig, TusState};
use reqwest::header::HeaderMap;
use tokio::net::TcpListener;

/// `Tus-Resumable: 1.0.0`, sent on every tus request of the tables.
pub const V: (&str, &str) = ("Tus-Resumable", "1.0.0");
/// The PATCH body media type.
pub const OCTETS: (&str, &str) = ("Content-Type", "application/offset+octet-stream");

/// A running endpoint; stopped when dropped.
pub struct Endpoint {
    pub addr: SocketAddr,
    pub store: FsStore,
    pub state: TusState,
    pub dir: tempfile::TempDir,
    pub client: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Endpoint {
    pub async fn start() -> Self {
        Self::with(TusConfig::default()).await
    }

    pub async fn with(config: TusConfig) -> Self {
        Self::in_dir(tempfile::tempdir().expect("temp dir"), config).await
    }

    /// Stops this endpoint and serves its directory from a new store and state, as after a
    /// restart of the process.
    pub async fn restart(mut self, config: TusConfig) -> Self {
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"));
        drop(self);
        Self::in_dir(dir, config).await
    }

    /// An endpoint on a new store over `dir`, which may already hold uploads.
    pub async fn in_dir(dir: tempfile::TempDir, config: TusConfig) -> Self {
        let store = FsStore::open(dir.path()).await.expect("store");
        Self::on(dir, store, config).await
    }

    /// An endpoint on `store`, a store over `dir`.
    pub async fn on(dir: tempfile::TempDir, store: FsStore, config: TusConfig) -> Self {
        let state = TusState::new(Arc::new(store.clone()), config);
        let app =
            ferry_tus::router(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        Self {
            addr,
            store,
            state,
            dir,
            client: reqwest::Client::new(),
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Sends one request; `{id}` in `path` is replaced by `id`.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Response {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if !body.is_empty() {
            req = req.body(body);
        }
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.bytes().await.expect("body").to_vec();
        Response {
            status,
            headers,
            body,
        }
    }

    /// Creates an upload of `length` bytes (or deferred) and returns its path.
    pub async fn create(&self, length: Option<u64>, extra: &[(&str, &str)]) -> String {
        let len = length.map(|l| l.to_string());
        let mut headers = vec![("Tus-Resumable", "1.0.0")];
        match &len {
            Some(l) => headers.push(("Upload-Length", l)),
            None => headers.push(("Upload-Defer-Length", "1")),
        }
        headers.extend_from_slice(extra);
        let res = self.send("POST", "/files/", &headers, Vec::new()).await;
        assert_eq!(res.status, 201, "create: {}", res.text());
        res.header("location").expect("Location").to_owned()
    }

    /// PATCHes `bytes` at `offset`.
    pub async fn patch(&self, path: &str, offset: u64, bytes: &[u8]) -> Response {
        let offset = offset.to_string();
        self.send(
            "PATCH",
            path,
            &[
                ("Tus-Resumable", "1.0.0"),
                ("Upload-Offset", &offset),
                ("Content-Type", "application/offset+octet-stream"),
            ],
            bytes.to_vec(),
        )
        .await
    }

    /// The length of the upload's data file, read without any request.
    pub async fn store_offset(&self, path: &str) -> u64 {
        let id = path.rsplit('/').next().expect("id");
        tokio::fs::metadata(self.dir.path().join(id))
            .await
            .map(|m| m.len())
            .unwrap_or(0)
    }

    /// The stored bytes of the upload at `path`.
    pub fn stored(&self, path: &str) -> Vec<u8> {
        let id = path.rsplit('/').next().expect("id");
        std::fs::read(self.dir.path().join(id)).expect("data file")
    }
}

/// What came back.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One row of a protocol table: a request on a fresh upload and what must come back.
pub struct Case {
    pub name: &'static str,
    pub method: &'static str,
    /// `{id}` is the fresh upload's id; `/files/` is the collection.
    pub path: &'static str,
    pub headers: &'static [(&'static str, &'static str)],
    pub body: &'static [u8],
    pub status: u16,
    /// Expected headers; `None` means the header must be absent.
    pub expect: &'static [(&'static str, Option<&'static str>)],
}

/// Runs every case against a fresh upload of `length` bytes that already holds `prefix`.
pub async fn run_table(ep: &Endpoint, length: Option<u64>, prefix: &[u8], cases: &[Case]) {
    for case in cases {
        let upload = ep
            .create(length, &[("Upload-Metadata", "filename YS50eHQ=")])
            .await;
        if !prefix.is_empty() {
            assert_eq!(ep.patch(&upload, 0, prefix).await.status, 204);
        }
        let path = case
            .path
            .replace("{id}", upload.trim_start_matches("/files/"));
        let res = ep
            .send(case.method, &path, case.headers, case.body.to_vec())
            .await;
        assert_eq!(res.status, case.status, "{}: {}", case.name, res.text());
        for (name, want) in case.expect {
            assert_eq!(res.header(name), *want, "{}: header {name}", case.name);
        }
    }
}
