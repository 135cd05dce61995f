//! The API's edges over real HTTP: unknown paths and wrong methods under every API prefix are
//! JSON `{message}` 404s and 405s (never the page), the page answers only navigations, `/s3/*`
//! without a bucket says so, and `/openapi.json` describes every route.

#[path = "../common/mod.rs"]
mod common;
mod docs;
mod edges;
mod openapi;

use reqwest::Method;

/// `ferry serve` with the page (from `ui_dir`, else the embedded one) and `extra` flags.
async fn start(ui_dir: Option<&std::path::Path>, extra: &[&str]) -> common::Server {
    let ui_dir = ui_dir.map(|d| d.display().to_string());
    let mut args = Vec::from(extra);
    if let Some(dir) = &ui_dir {
        args.extend(["--ui-dir", dir]);
    }
    common::configure(&args).await.start()
}

/// A bucket that is never contacted: routing alone is under test.
const BUCKET: &[&str] = &[
    "--s3-endpoint",
    "http://127.0.0.1:9",
    "--s3-bucket",
    "surface",
    "--s3-access-key",
    "key",
    "--s3-secret-key",
    "secret",
    "--s3-force-path-style",
];

/// A server with a cloud provider enabled (never contacted): its routes, the login socket
/// included, are mounted.
async fn start_with_provider() -> common::Server {
    let provider = [
        "--secret",
        "surface-secret",
        "--google-key",
        "key",
        "--google-secret",
        "secret",
        "--assembly-key",
        "surface-key",
    ];
    start(None, &[BUCKET, &provider].concat()).await
}

async fn send(base: &str, method: &str, path: &str, accept: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(
            Method::from_bytes(method.as_bytes()).expect("method"),
            format!("{base}{path}"),
        )
        .header("accept", accept)
        .send()
        .await
        .expect("request")
}
