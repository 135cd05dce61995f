//! Helpers the binary's integration tests share (each test file that needs them says
//! `mod common;`): a whole `ferry serve` on 127.0.0.1:0 with its own data directory, and
//! creating a tus upload on a running `ferry`.
#![allow(dead_code)]

use std::net::SocketAddr;

use clap::Parser;
use ferry::{Cli, Command};
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

/// Starts `ferry serve --listen 127.0.0.1:PORT --data-dir TMP --no-ui` plus `extra`.
pub async fn serve(extra: &[&str]) -> Server {
    let data = tempfile::tempdir().expect("temp dir");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (dir, listen) = (data.path().display().to_string(), addr.to_string());
    let mut args = vec![
        "ferry",
        "serve",
        "--listen",
        &listen,
        "--data-dir",
        &dir,
        "--no-ui",
    ];
    args.extend_from_slice(extra);
    let Command::Serve(config) = Cli::try_parse_from(args).expect("flags").command;
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

/// Creates a tus upload of `len` bytes on `base` (the server's URL); returns its `Location` as
/// the server answered it.
pub async fn create(client: &reqwest::Client, base: &str, len: usize) -> String {
    let res = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", len.to_string())
        .send()
        .await
        .expect("create");
    assert_eq!(res.status(), 201);
    res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned()
}
