//! `/upload`, `/upload/raw` and `GET /upload/{id}`: bodies that are not forms, names that try
//! to leave the directory, ids that are not ids, another subject's file, and downloads that a
//! browser must never render.

use crate::probe::{Server, http, run_table, start, token};

/// Stores `bytes` as `name` through `/upload/raw` as `auth`; returns the file's path.
async fn store(server: &Server, auth: &str, name: &str, bytes: &[u8]) -> String {
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name={name}", server.base))
        .bearer_auth(auth)
        .body(bytes.to_vec())
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), 200);
    let answer: serde_json::Value = res.json().await.expect("json");
    let url = answer["files"][0]["url"].as_str().expect("url").to_owned();
    url.find("/upload/")
        .map(|at| url[at..].to_owned())
        .expect("a /upload/ url")
}

#[tokio::test]
async fn malformed_form_requests_get_their_precise_refusal() {
    let server = start(&["--auth-secret", crate::probe::SECRET, "--max-size", "100"]).await;
    let alice = token("alice");
    let bob = token("bob");
    let file = store(&server, &alice, "a.txt", b"alice's").await;
    run_table(
        &server,
        vec![
            http("not a form", "POST", "/upload")
                .bearer(&alice)
                .header("Content-Type", "text/plain")
                .body(b"hello".to_vec())
                .expect(400, ""),
            http("a form without a boundary", "POST", "/upload")
                .bearer(&alice)
                .header("Content-Type", "multipart/form-data")
                .body(b"hello".to_vec())
                .expect(400, ""),
            http("a form without a file", "POST", "/upload")
                .bearer(&alice)
                .header("Content-Type", "multipart/form-data; boundary=X")
                .body(b"--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--X--\r\n".to_vec())
                .expect(400, ""),
            http("a truncated form", "POST", "/upload")
                .bearer(&alice)
                .header("Content-Type", "multipart/form-data; boundary=X")
                .body(b"--X\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"a\"\r\n\r\nabc".to_vec())
                .expect(400, ""),
            http("raw over --max-size", "PUT", "/upload/raw?name=big.bin")
                .bearer(&alice)
                .body(vec![7u8; 101])
                .expect(413, "File exceeds the maximum size of 100 bytes"),
            http("download: traversal", "GET", "/upload/..%2F..%2Fetc%2Fpasswd")
                .bearer(&alice)
                .expect(404, "No such file"),
            http("download: upper-case id", "GET", "/upload/0123456789ABCDEF0123456789ABCDEF")
                .bearer(&alice)
                .expect(404, "No such file"),
            http("download: another subject's file", "GET", file.clone())
                .bearer(&bob)
                .expect(404, "No such file"),
        ],
    )
    .await;
}

#[tokio::test]
async fn names_cannot_leave_the_directory_and_downloads_never_render() {
    let server = start(&[]).await;
    let alice = token("alice");
    let html = b"<html><script>alert(1)</script></html>";
    let file = store(&server, &alice, "..%2F..%2Fevil.html", html).await;
    // The name stayed a name: nothing was written beside the data directory.
    let outside = server
        .data
        .path()
        .parent()
        .expect("parent")
        .join("evil.html");
    assert!(!outside.exists(), "a name escaped the data directory");
    let res = reqwest::get(format!("{}{file}", server.base))
        .await
        .expect("GET");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let disposition = res.headers()["content-disposition"]
        .to_str()
        .expect("ascii");
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert!(!disposition.contains('/'), "{disposition}");
    assert_eq!(res.bytes().await.expect("body").as_ref(), html);
}
