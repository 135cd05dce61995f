//! Helpers the form endpoint's tests share (each test file that needs them says `mod common;`):
//! the endpoint at `/upload` on 127.0.0.1:0 over a store in a fresh directory, configured per
//! test (a size cap, an idle timeout, hooks), and what it answered and stored.
#![allow(dead_code)]

use std::path::PathBuf;

use ferry_form::{FormConfig, FormState, router};
use ferry_testkit::TestServer;
use reqwest::multipart::Form;

/// A running form endpoint; stopped, and its store removed, when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The store's directory.
    pub dir: PathBuf,
    _server: TestServer,
    _tmp: tempfile::TempDir,
}

/// The endpoint capped at `max_size`, with `with` applied to its state (e.g.
/// `|s| s.with_idle_timeout(..)`, or `|s| s` for none).
pub async fn start(max_size: Option<u64>, with: impl FnOnce(FormState) -> FormState) -> Server {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("form");
    let state = FormState::open(FormConfig {
        dir: dir.clone(),
        max_size,
        base_path: "/upload".to_owned(),
    })
    .await
    .expect("open store");
    let server = TestServer::start(router(with(state))).await;
    Server {
        base: server.url(""),
        dir,
        _server: server,
        _tmp: tmp,
    }
}

impl Server {
    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `POST /upload` with `form`.
    pub async fn post_form(&self, form: Form) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url("/upload"))
            .multipart(form)
            .send()
            .await
            .expect("POST")
    }

    /// The bytes `GET path` answers (an answer's `url`), which must be a 200.
    pub async fn download(&self, path: &str) -> Vec<u8> {
        let res = reqwest::get(self.url(path)).await.expect("GET");
        assert_eq!(res.status(), 200, "GET {path}");
        res.bytes().await.expect("bytes").to_vec()
    }

    /// The names of the files in the store, sorted.
    pub fn stored(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .expect("form dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}
