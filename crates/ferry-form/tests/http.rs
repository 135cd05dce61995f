//! The form endpoint over real HTTP on loopback: what is stored (sha256) is what was sent, and
//! bad input gets the exact status and message.

mod common;

use common::Server;
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn sample(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[tokio::test]
async fn form_upload_stores_the_exact_bytes_and_serves_them_as_attachment() {
    let server = common::start(None, |s| s).await;
    let bytes = sample(3 * 1024 * 1024 + 7, 1);
    let form = Form::new().text("name", "ignored meta").part(
        "files[]",
        Part::bytes(bytes.clone())
            .file_name("photo é.jpg")
            .mime_str("image/jpeg")
            .expect("mime"),
    );
    let res = server.post_form(form).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    let url = body["url"].as_str().expect("url");
    assert!(url.starts_with("/upload/"), "{url}");
    assert_eq!(body["name"], "photo é.jpg");
    assert_eq!(body["files"][0]["size"], bytes.len());

    let got = reqwest::get(server.url(url)).await.expect("GET");
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["x-content-type-options"], "nosniff");
    assert_eq!(got.headers()["content-type"], "application/octet-stream");
    let disposition = got.headers()["content-disposition"]
        .to_str()
        .expect("ascii");
    assert!(disposition.starts_with("attachment;"), "{disposition}");
    assert!(
        disposition.contains("filename*=UTF-8''photo%20%C3%A9.jpg"),
        "{disposition}"
    );
    let stored = got.bytes().await.expect("bytes");
    assert_eq!(digest(&stored), digest(&bytes));
}

#[tokio::test]
async fn bundle_upload_answers_every_file_in_order() {
    let server = common::start(None, |s| s).await;
    let files: Vec<Vec<u8>> = (0..3).map(|i| sample(100_000 + i * 17, i as u8)).collect();
    let mut form = Form::new();
    for (i, f) in files.iter().enumerate() {
        form = form.part(
            "files[]",
            Part::bytes(f.clone()).file_name(format!("f{i}.bin")),
        );
    }
    let res = server.post_form(form).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    let listed = body["files"].as_array().expect("files");
    assert_eq!(listed.len(), 3);
    assert_eq!(body["url"], listed[0]["url"]);
    for (i, entry) in listed.iter().enumerate() {
        assert_eq!(entry["name"], format!("f{i}.bin"));
        let stored = server.download(entry["url"].as_str().expect("url")).await;
        assert_eq!(digest(&stored), digest(&files[i]));
    }
}

#[tokio::test]
async fn raw_upload_with_put_and_post_stores_the_body() {
    let server = common::start(None, |s| s).await;
    for method in [reqwest::Method::PUT, reqwest::Method::POST] {
        let bytes = sample(777_777, 9);
        let res = reqwest::Client::new()
            .request(
                method.clone(),
                server.url("/upload/raw?name=r%C3%A9sum%C3%A9.pdf"),
            )
            .header("content-type", "application/pdf")
            .body(bytes.clone())
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), 200, "{method}");
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["name"], "résumé.pdf");
        assert_eq!(body["files"][0]["type"], "application/pdf");
        let stored = server.download(body["url"].as_str().expect("url")).await;
        assert_eq!(digest(&stored), digest(&bytes));
    }
}

#[tokio::test]
async fn files_over_the_cap_get_413_and_leave_nothing_behind() {
    let server = common::start(Some(1000), |s| s).await;
    let form = Form::new()
        .part(
            "files[]",
            Part::bytes(sample(500, 1)).file_name("small.bin"),
        )
        .part("files[]", Part::bytes(sample(1001, 2)).file_name("big.bin"));
    let res = server.post_form(form).await;
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body["message"],
        "File exceeds the maximum size of 1000 bytes"
    );
    assert_eq!(
        server.stored(),
        Vec::<String>::new(),
        "the bundle's first file was removed too"
    );

    // Raw: refused from Content-Length, and when streamed without one.
    let res = reqwest::Client::new()
        .put(server.url("/upload/raw?name=x"))
        .body(sample(1001, 3))
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), 413);
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(sample(600, 1)), Ok(sample(600, 2))];
    let res = reqwest::Client::new()
        .put(server.url("/upload/raw?name=x"))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body["message"],
        "File exceeds the maximum size of 1000 bytes"
    );
}

/// What a refusal's JSON `message` must be.
enum Message {
    Exact(&'static str),
    Contains(&'static str),
    StartsWith(&'static str),
    /// Not checked (a bare 404).
    Any,
}

/// One request and the answer it must get.
struct Case {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    content_type: Option<&'static str>,
    body: &'static str,
    status: u16,
    message: Message,
}

/// Sends every case to `server` and checks its status and message.
async fn run_table(server: &Server, cases: &[Case]) {
    let client = reqwest::Client::new();
    for case in cases {
        let method = reqwest::Method::from_bytes(case.method.as_bytes()).expect("method");
        let mut req = client
            .request(method, server.url(case.path))
            .body(case.body);
        if let Some(ct) = case.content_type {
            req = req.header("content-type", ct);
        }
        let res = req.send().await.expect("send");
        assert_eq!(res.status(), case.status, "{}", case.name);
        if matches!(case.message, Message::Any) {
            continue;
        }
        let body: Value = res.json().await.expect("json");
        let got = body["message"].as_str().expect("message");
        let ok = match case.message {
            Message::Exact(want) => got == want,
            Message::Contains(want) => got.contains(want),
            Message::StartsWith(want) => got.starts_with(want),
            Message::Any => true,
        };
        assert!(ok, "{}: {got}", case.name);
    }
}

#[tokio::test]
async fn bad_requests_get_400_with_a_message() {
    let server = common::start(None, |s| s).await;
    run_table(
        &server,
        &[
            Case {
                name: "a form without a file part",
                method: "POST",
                path: "/upload",
                content_type: Some("multipart/form-data; boundary=X"),
                body: "--X\r\nContent-Disposition: form-data; name=\"only\"\r\n\r\ntext\r\n--X--\r\n",
                status: 400,
                message: Message::Exact("The form has no file part (a part with a filename)"),
            },
            Case {
                name: "not a form",
                method: "POST",
                path: "/upload",
                content_type: Some("text/plain"),
                body: "hello",
                status: 400,
                message: Message::Contains("multipart/form-data"),
            },
            Case {
                name: "a truncated form",
                method: "POST",
                path: "/upload",
                content_type: Some("multipart/form-data; boundary=X"),
                body: "--X\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"a\"\r\n\r\ntrunc",
                status: 400,
                message: Message::StartsWith("Invalid multipart body"),
            },
            Case {
                name: "an unknown upload",
                method: "GET",
                path: "/upload/0123456789abcdef0123456789abcdef",
                content_type: None,
                body: "",
                status: 404,
                message: Message::Any,
            },
            Case {
                name: "a path out of the store",
                method: "GET",
                path: "/upload/..%2f..%2fetc%2fpasswd",
                content_type: None,
                body: "",
                status: 404,
                message: Message::Any,
            },
        ],
    )
    .await;
}
