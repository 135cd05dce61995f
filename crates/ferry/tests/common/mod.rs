//! Helpers the binary's integration tests share (each test file that needs them says
//! `mod common;`): a whole `ferry serve` on 127.0.0.1:0 with its own data directory (parsed
//! from its flags, then started), the flags of a Garage-backed tus store, creating a tus
//! upload on a running `ferry`, posting an Assembly form, and the bearer tokens, tus requests and
//! `{message}` answers of the `--auth-secret` suites.
#![allow(dead_code)]

use std::net::SocketAddr;

use clap::Parser;
use ferry::{Cli, Command, ServeConfig};
use ferry_auth::Claims;
use ferry_testkit::garage::Garage;
use reqwest::{Method, StatusCode};
use tokio::net::TcpListener;

/// A `ferry serve --no-ui` running in this process, stopped when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub addr: SocketAddr,
    /// Its `--data-dir`, removed when dropped.
    pub data: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// The server's `--data-dir`.
    pub fn data_dir(&self) -> &std::path::Path {
        self.data.path()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A `ferry serve` parsed from its flags, with its listener bound and its data directory made,
/// not yet running: for a test that looks at the parsed config first, or runs it itself.
pub struct Configured {
    pub config: ServeConfig,
    pub listener: TcpListener,
    /// Its `--data-dir`.
    pub data: tempfile::TempDir,
}

/// `ferry serve --listen 127.0.0.1:PORT --data-dir TMP` plus `args`, parsed as the binary
/// parses them (so `FERRY_*` environment variables apply as they would).
pub async fn configure(args: &[&str]) -> Configured {
    let data = tempfile::tempdir().expect("temp dir");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (dir, listen) = (data.path().display().to_string(), addr.to_string());
    let mut all = vec!["ferry", "serve", "--listen", &listen, "--data-dir", &dir];
    all.extend_from_slice(args);
    let Command::Serve(config) = Cli::try_parse_from(all).expect("flags").command;
    Configured {
        config,
        listener,
        data,
    }
}

impl Configured {
    /// Serves it in this process until the returned [`Server`] is dropped.
    pub fn start(self) -> Server {
        let Self {
            config,
            listener,
            data,
        } = self;
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            ferry::serve(&config, listener, std::future::pending())
                .await
                .expect("serve");
        });
        Server {
            base: format!("http://{addr}"),
            addr,
            data,
            task,
        }
    }
}

/// Starts `ferry serve --listen 127.0.0.1:PORT --data-dir TMP --no-ui` plus `extra`.
pub async fn serve(extra: &[&str]) -> Server {
    let mut args = vec!["--no-ui"];
    args.extend_from_slice(extra);
    configure(&args).await.start()
}

/// `ferry serve` flags storing tus uploads in `garage`'s bucket: `--store s3` and the bucket's
/// S3 settings (path style, no key prefix).
pub fn s3_store(garage: &Garage) -> Vec<String> {
    let mut args = vec!["--store".to_owned(), "s3".to_owned()];
    args.extend(garage.ferry_args());
    args
}

/// Creates a tus upload of `len` bytes on `base` (the server's URL); returns its `Location` as
/// the server answered it.
pub async fn create(client: &reqwest::Client, base: &str, len: usize) -> String {
    create_with(client, base, len, &[]).await
}

/// [`create`] with `headers` added (a bearer token, `Upload-Metadata`, ...).
pub async fn create_with(
    client: &reqwest::Client,
    base: &str,
    len: usize,
    headers: &[(&str, &str)],
) -> String {
    let mut req = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", len.to_string());
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req.send().await.expect("create");
    assert_eq!(res.status(), 201);
    res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned()
}

/// Seconds since the Unix epoch (a token's `exp`).
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A token for `sub` signed with `secret`, valid for ten minutes, with `edit` applied to its
/// claims last (a prefix, limits, an `exp` in the past).
pub fn token(secret: &str, sub: &str, edit: impl FnOnce(&mut Claims)) -> String {
    let mut claims = Claims {
        sub: sub.to_owned(),
        exp: now() + 600,
        ..Claims::default()
    };
    edit(&mut claims);
    ferry_auth::issue(secret.as_bytes(), &claims)
}

/// A tus request (`Tus-Resumable: 1.0.0`) carrying `auth` as its bearer token, if any.
pub fn tus(method: Method, url: &str, auth: Option<&str>) -> reqwest::RequestBuilder {
    let req = reqwest::Client::new()
        .request(method, url)
        .header("Tus-Resumable", "1.0.0");
    match auth {
        Some(auth) => req.bearer_auth(auth),
        None => req,
    }
}

/// The status and JSON `{message}` of an answer (empty when it has none).
pub async fn message(res: reqwest::Response) -> (StatusCode, String) {
    let status = res.status();
    let body: serde_json::Value = res.json().await.unwrap_or_default();
    let text = body["message"].as_str().unwrap_or_default().to_owned();
    (status, text)
}

/// POSTs an Assembly form to `{base}/assemblies`: `params`, then `num_expected_upload_files`
/// when given, then `file` as `f.bin` when given. The status, `Retry-After` and the JSON answer.
pub async fn post_assembly(
    base: &str,
    params: &serde_json::Value,
    expected: Option<u64>,
    file: Option<&[u8]>,
) -> (u16, Option<String>, serde_json::Value) {
    let boundary = "ferry-test-boundary";
    let part =
        |name: &str| format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"");
    let mut body = format!("{}\r\n\r\n{params}\r\n", part("params")).into_bytes();
    if let Some(n) = expected {
        body.extend(format!("{}\r\n\r\n{n}\r\n", part("num_expected_upload_files")).bytes());
    }
    if let Some(bytes) = file {
        let head = "; filename=\"f.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n";
        body.extend(format!("{}{head}", part("file")).bytes());
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend(format!("--{boundary}--\r\n").bytes());
    let res = reqwest::Client::new()
        .post(format!("{base}/assemblies"))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .expect("post");
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, retry, res.json().await.expect("json"))
}
