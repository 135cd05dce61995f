//! Unknown paths and wrong methods under every API prefix are JSON `{message}` 404s and 405s
//! (never the page), `/s3/*` without a bucket says so, and the page answers only navigations.

use super::*;

/// A page directory with an index and one asset.
fn page_dir() -> tempfile::TempDir {
    let ui = tempfile::tempdir().expect("temp dir");
    std::fs::write(ui.path().join("index.html"), "<title>ferry page</title>").expect("write");
    std::fs::create_dir(ui.path().join("assets")).expect("mkdir");
    std::fs::write(ui.path().join("assets/app.js"), "console.log(1)").expect("write");
    ui
}

/// Asserts a JSON `{message}` error with `status`; HEAD answers carry no body, so only their
/// status and content type are checked.
async fn assert_json_error(res: reqwest::Response, method: &str, path: &str, status: u16) {
    assert_eq!(res.status(), status, "{method} {path}");
    assert_eq!(
        res.headers()["content-type"],
        "application/json",
        "{method} {path}"
    );
    if path.starts_with("/files") {
        assert_eq!(res.headers()["tus-resumable"], "1.0.0", "{method} {path}");
    }
    if method == "HEAD" {
        return;
    }
    let body: serde_json::Value = res.json().await.expect("JSON body");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{method} {path}: {body}"
    );
}

#[tokio::test]
async fn unknown_paths_under_every_api_prefix_are_json_404s() {
    let ui = page_dir();
    let server = start(Some(ui.path()), BUCKET).await;
    let cases = [
        ("HEAD", "/files/abc/def"),
        ("GET", "/files/abc/def"),
        ("PATCH", "/files/abc/def/ghi"),
        ("GET", "/upload/a/b"),
        ("POST", "/upload/raw/x"),
        ("GET", "/url"),
        ("POST", "/url/nope"),
        ("GET", "/s3"),
        ("GET", "/s3/nope"),
        ("GET", "/s3/multipart/id/1/extra"),
        ("GET", "/api"),
        ("GET", "/api/token/extra"),
        ("GET", "/api2/nope"),
        ("GET", "/drive"),
        ("GET", "/drive/nope"),
        ("GET", "/instagram/nope/deeper"),
        ("GET", "/providers/x"),
        ("GET", "/metrics/x"),
        ("GET", "/health/x"),
        ("GET", "/openapi.json/x"),
    ];
    for (method, path) in cases {
        // Asked as a browser would: the page must still not answer.
        let res = send(&server.base, method, path, "text/html,*/*;q=0.8").await;
        assert_json_error(res, method, path, 404).await;
    }
}

#[tokio::test]
async fn wrong_methods_on_known_paths_are_json_405s_with_allow() {
    let server = start(None, BUCKET).await;
    // Each path with a method it does not take and every method it does.
    let cases: &[(&str, &str, &[&str])] = &[
        ("PUT", "/files/", &["POST", "OPTIONS"]),
        (
            "PUT",
            "/files/abc",
            &["HEAD", "PATCH", "DELETE", "GET", "POST", "OPTIONS"],
        ),
        ("GET", "/upload", &["POST"]),
        ("GET", "/upload/raw", &["POST", "PUT"]),
        ("DELETE", "/upload/abc", &["GET", "HEAD"]),
        ("GET", "/url/meta", &["POST"]),
        ("GET", "/url/get", &["POST"]),
        ("POST", "/s3/params", &["GET", "HEAD"]),
        ("GET", "/s3/multipart", &["POST"]),
        ("POST", "/s3/multipart/id", &["GET", "HEAD", "DELETE"]),
        ("GET", "/s3/multipart/id/complete", &["POST"]),
        ("POST", "/api/token", &["GET", "HEAD"]),
        ("POST", "/drive/list", &["GET", "HEAD"]),
        ("GET", "/drive/get/file", &["POST"]),
        ("PUT", "/drive/logout", &["GET", "HEAD", "POST"]),
        ("GET", "/drive/refresh-token", &["POST"]),
        ("POST", "/drive/connect", &["GET", "HEAD"]),
        ("POST", "/providers", &["GET", "HEAD"]),
        ("POST", "/metrics", &["GET", "HEAD"]),
        ("DELETE", "/health", &["GET", "HEAD"]),
        ("POST", "/openapi.json", &["GET", "HEAD"]),
    ];
    for (method, path, allowed) in cases {
        let res = send(&server.base, method, path, "application/json").await;
        let allow = res
            .headers()
            .get("allow")
            .unwrap_or_else(|| panic!("{method} {path}: no Allow"))
            .to_str()
            .expect("ascii")
            .to_owned();
        let mut got: Vec<&str> = allow.split(',').map(str::trim).collect();
        got.sort_unstable();
        let mut want = allowed.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "{method} {path}");
        assert_json_error(res, method, path, 405).await;
    }
}

#[tokio::test]
async fn s3_routes_without_a_bucket_say_so() {
    let server = start(None, &[]).await;
    for (method, path) in [
        ("GET", "/s3/params?filename=a&type=text/plain"),
        ("POST", "/s3/multipart"),
        ("GET", "/s3/multipart/id"),
        ("DELETE", "/s3/multipart/id"),
        ("GET", "/s3/multipart/id/batch?partNumbers=1"),
        ("POST", "/s3/multipart/id/complete"),
        ("GET", "/s3/multipart/id/1"),
        ("GET", "/s3/anything/else"),
    ] {
        let res = send(&server.base, method, path, "*/*").await;
        assert_eq!(res.status(), 404, "{method} {path}");
        assert_eq!(res.headers()["content-type"], "application/json");
        let body: serde_json::Value = res.json().await.expect("JSON");
        assert_eq!(
            body,
            serde_json::json!({ "message": "S3 is not configured" }),
            "{method} {path}"
        );
    }
}

/// The page answers navigations only, for a `--ui-dir` page and for the embedded one.
#[tokio::test]
async fn the_page_answers_navigations_only() {
    let ui = page_dir();
    let dir = start(Some(ui.path()), &[]).await;
    let html = "text/html,application/xhtml+xml,*/*;q=0.8";
    for path in ["/", "/some/client/route"] {
        let res = send(&dir.base, "GET", path, html).await;
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(res.text().await.expect("body"), "<title>ferry page</title>");
    }
    let asset = send(&dir.base, "GET", "/assets/app.js", "*/*").await;
    assert_eq!(asset.status(), 200);
    assert_eq!(asset.text().await.expect("body"), "console.log(1)");
    for (path, accept) in [
        ("/some/client/route", "application/json"),
        ("/some/client/route", "text/html;q=0"),
        ("/missing.js", html),
        ("/assets/x.css", html),
        ("/assets/app.js.map", "*/*"),
    ] {
        let res = send(&dir.base, "GET", path, accept).await;
        assert_eq!(res.status(), 404, "{path} {accept}");
        assert_eq!(res.headers()["content-type"], "application/json");
    }
    let post = send(&dir.base, "POST", "/some/client/route", html).await;
    assert_ne!(post.status(), 200);

    // A --ui-dir with no page in it: the "not built" placeholder, for navigations only.
    let empty = tempfile::tempdir().expect("temp dir");
    let placeholder = start(Some(empty.path()), &[]).await;
    let page = send(&placeholder.base, "GET", "/some/client/route", html).await;
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .expect("body")
            .contains("The upload page is not built")
    );
    let asset = send(&placeholder.base, "GET", "/missing.js", html).await;
    assert_eq!(asset.status(), 404);

    let embedded = start(None, &[]).await;
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps/demo/dist");
    let built = dist.join("index.html").is_file();
    let page = send(&embedded.base, "GET", "/some/client/route", html).await;
    assert_eq!(page.status(), 200);
    if built {
        assert_eq!(page.headers()["content-type"], "text/html");
    }
    for (path, accept) in [
        ("/some/client/route", "application/json"),
        ("/missing.js", html),
        ("/assets/x.css", html),
    ] {
        let res = send(&embedded.base, "GET", path, accept).await;
        assert_eq!(res.status(), 404, "{path}");
    }
}
