//! Helpers the binary's integration tests share (each test file that needs them says
//! `mod common;`): creating a tus upload on a running `ferry`.
#![allow(dead_code)]

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
