//! `ferry serve --auth-secret --quota-bytes`: an upload whose size is not known when it starts
//! is charged as its bytes arrive and once its size is known, on every path that can start one
//! (tus deferred length, IETF-draft creation, chunked form and raw bodies, concatenation
//! finals). The request that crosses the quota is refused with the quota's status and message,
//! what was stored before stays (sha256 on disk), nothing is stored past the quota, and a
//! resumed upload is charged once. Real HTTP on loopback against the whole server.

mod common;

use std::path::PathBuf;

use common::{Server, message};
use ferry_auth::Claims;
use ferry_testkit::{random_bytes, sha256_hex};
use reqwest::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SECRET: &str = "quota-test-secret";
/// The quota of every server here: 100,000 bytes per subject per hour.
const QUOTA: usize = 100_000;
const OVER: &str = "File too large for the upload quota of 100000 bytes per 3600 seconds";
const EXHAUSTED: &str =
    "Upload quota exceeded: 100000 of 100000 bytes used in the last 3600 seconds";

/// A server with the quota of every test here, plus `extra` flags.
async fn start(extra: &[&str]) -> Server {
    let quota = QUOTA.to_string();
    let mut args = vec![
        "--auth-secret",
        SECRET,
        "--quota-bytes",
        &quota,
        "--quota-window",
        "3600",
    ];
    args.extend_from_slice(extra);
    common::serve(&args).await
}

impl Server {
    /// The bytes a tus upload holds on disk (readable before it is finished).
    fn stored(&self, upload: &str) -> Vec<u8> {
        let id = upload.rsplit('/').next().expect("id");
        std::fs::read(self.data.path().join("tus").join(id)).expect("upload bytes")
    }

    /// Files the form endpoint keeps (bytes and sidecars).
    fn form_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.data.path().join("form")) {
            Ok(dir) => dir.map(|e| e.expect("entry").path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn token(sub: &str, edit: impl FnOnce(&mut Claims)) -> String {
    common::token(SECRET, sub, edit)
}

fn request(method: Method, url: &str, auth: &str) -> reqwest::RequestBuilder {
    common::tus(method, url, Some(auth))
}

/// A body sent chunked (no `Content-Length`), in pieces of 10,000 bytes.
fn chunked(bytes: &[u8]) -> reqwest::Body {
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes.chunks(10_000).map(|c| Ok(c.to_vec())).collect();
    reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
}

/// Creates a tus upload (`len` or deferred, other headers as given); returns its URL.
async fn create(server: &Server, auth: &str, len: Option<usize>, extra: &[(&str, &str)]) -> String {
    let mut req = request(Method::POST, &format!("{}/files/", server.base), auth);
    req = match len {
        Some(len) => req.header("Upload-Length", len.to_string()),
        None => req.header("Upload-Defer-Length", "1"),
    };
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let res = req.send().await.expect("POST");
    assert_eq!(res.status(), StatusCode::CREATED, "{:?}", res.text().await);
    let location = res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned();
    format!("{}{location}", server.base)
}

fn patch(url: &str, auth: &str, offset: usize, body: reqwest::Body) -> reqwest::RequestBuilder {
    request(Method::PATCH, url, auth)
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(body)
}

async fn offset(url: &str, auth: &str) -> String {
    let res = request(Method::HEAD, url, auth).send().await.expect("HEAD");
    res.headers()["upload-offset"]
        .to_str()
        .expect("ascii")
        .to_owned()
}

/// A 1-byte upload as `auth` with a declared size: 201, or the quota's refusal.
async fn one_more_byte(server: &Server, auth: &str) -> (StatusCode, String) {
    let res = request(Method::POST, &format!("{}/files/", server.base), auth)
        .header("Upload-Length", "1")
        .send()
        .await
        .expect("POST");
    match res.status() {
        StatusCode::CREATED => (StatusCode::CREATED, String::new()),
        _ => message(res).await,
    }
}

#[tokio::test]
async fn a_deferred_length_upload_is_charged_as_its_bytes_arrive() {
    let server = start(&[]).await;
    let alice = token("alice", |_| {});
    let (a, b) = (random_bytes(120_000), random_bytes(60_000));
    let first = create(&server, &alice, None, &[]).await;
    let second = create(&server, &alice, None, &[]).await;
    let res = patch(&first, &alice, 0, a[..60_000].to_vec().into())
        .send()
        .await;
    assert_eq!(res.expect("PATCH").status(), StatusCode::NO_CONTENT);

    // Declared past the quota: refused before a byte is read; the offset stays.
    let res = patch(&first, &alice, 60_000, a[60_000..].to_vec().into())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(
        message(res).await,
        (StatusCode::PAYLOAD_TOO_LARGE, OVER.into())
    );
    assert_eq!(offset(&first, &alice).await, "60000");

    // Chunked, crossing what is left of the window: stored up to it, not one byte past.
    let res = patch(&second, &alice, 0, chunked(&b))
        .send()
        .await
        .expect("PATCH");
    let retry = res.headers().get("retry-after").cloned();
    let (status, text) = message(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text.starts_with(EXHAUSTED), "{text}");
    assert!(retry.is_some(), "429 says when to retry");
    assert_eq!(offset(&second, &alice).await, "40000");
    assert_eq!(
        sha256_hex(&server.stored(&second)),
        sha256_hex(&b[..40_000])
    );

    // The quota is used up: the next byte of either upload is refused, and nothing moves.
    let res = patch(&first, &alice, 60_000, chunked(&a[60_000..61_000]))
        .send()
        .await;
    assert_eq!(res.expect("PATCH").status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(offset(&first, &alice).await, "60000");
    assert_eq!(sha256_hex(&server.stored(&first)), sha256_hex(&a[..60_000]));
}

#[tokio::test]
async fn a_resumed_upload_is_charged_once() {
    let server = start(&[]).await;
    let bob = token("bob", |_| {});
    let bytes = random_bytes(QUOTA);
    let upload = create(&server, &bob, None, &[]).await;
    let res = patch(&upload, &bob, 0, chunked(&bytes[..30_000]))
        .send()
        .await;
    assert_eq!(res.expect("PATCH").status(), StatusCode::NO_CONTENT);

    // A PATCH declaring 40,000 bytes that breaks off after 10,000: only those stay charged.
    let path = upload.trim_start_matches(&server.base).to_owned();
    let mut socket = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let head = format!(
        "PATCH {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {bob}\r\nTus-Resumable: 1.0.0\r\n\
         Upload-Offset: 30000\r\nContent-Type: application/offset+octet-stream\r\n\
         Content-Length: 40000\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    socket
        .write_all(&bytes[30_000..40_000])
        .await
        .expect("bytes");
    socket.shutdown().await.expect("half close");
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer).await;
    assert_eq!(offset(&upload, &bob).await, "40000");

    // The length arrives with the rest: 60,000 more are charged, not 100,000.
    let res = patch(&upload, &bob, 40_000, bytes[40_000..].to_vec().into())
        .header("Upload-Length", QUOTA.to_string())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(
        res.status(),
        StatusCode::NO_CONTENT,
        "{:?}",
        res.text().await
    );
    let got = request(Method::GET, &upload, &bob)
        .send()
        .await
        .expect("GET");
    assert_eq!(
        sha256_hex(&got.bytes().await.expect("body")),
        sha256_hex(&bytes)
    );

    // Charged exactly the quota: not a byte more fits.
    let (status, text) = one_more_byte(&server, &bob).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text.starts_with(EXHAUSTED), "{text}");
}

#[tokio::test]
async fn an_ietf_draft_upload_of_unknown_length_is_charged_as_it_arrives() {
    let server = start(&["--ietf-draft"]).await;
    let carol = token("carol", |_| {});
    let files = format!("{}/files/", server.base);
    let draft = |body: reqwest::Body| {
        reqwest::Client::new()
            .post(&files)
            .bearer_auth(&carol)
            .header("Upload-Draft-Interop-Version", "8")
            .header("Upload-Complete", "?1")
            .body(body)
    };
    let first = random_bytes(70_000);
    let res = draft(chunked(&first)).send().await.expect("POST");
    assert_eq!(res.status(), StatusCode::CREATED);
    let done = format!(
        "{}{}",
        server.base,
        res.headers()["location"].to_str().expect("ascii")
    );
    assert_eq!(sha256_hex(&server.stored(&done)), sha256_hex(&first));

    // 30,000 of the quota are left: a 50,000-byte body is cut there and refused.
    let second = random_bytes(50_000);
    let res = draft(chunked(&second)).send().await.expect("POST");
    let (status, text) = message(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text.starts_with(EXHAUSTED), "{text}");
    // The first upload is untouched.
    assert_eq!(sha256_hex(&server.stored(&done)), sha256_hex(&first));
}

#[tokio::test]
async fn chunked_form_and_raw_uploads_are_charged_as_they_arrive_and_kept_all_or_nothing() {
    let server = start(&[]).await;
    let dave = token("dave", |_| {});
    // Raw: a chunked body larger than the whole quota is 413 where it crosses; nothing kept.
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=big.bin", server.base))
        .bearer_auth(&dave)
        .body(chunked(&random_bytes(QUOTA + 1)))
        .send()
        .await
        .expect("PUT");
    assert_eq!(
        message(res).await,
        (StatusCode::PAYLOAD_TOO_LARGE, OVER.into())
    );
    assert_eq!(server.form_files(), Vec::<PathBuf>::new());

    let first = random_bytes(60_000);
    let form = reqwest::multipart::Form::new().part(
        "files[]",
        reqwest::multipart::Part::stream(chunked(&first)).file_name("first.bin"),
    );
    let res = reqwest::Client::new()
        .post(format!("{}/upload", server.base))
        .bearer_auth(&dave)
        .multipart(form)
        .send()
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::OK);
    let body: serde_json::Value = res.json().await.expect("json");
    let url = format!("{}{}", server.base, body["url"].as_str().expect("url"));
    let kept = server.form_files().len();

    // 60,000 more do not fit what is left: refused, and nothing of them is kept.
    let second = random_bytes(60_000);
    let form = reqwest::multipart::Form::new().part(
        "files[]",
        reqwest::multipart::Part::stream(chunked(&second)).file_name("second.bin"),
    );
    let res = reqwest::Client::new()
        .post(format!("{}/upload", server.base))
        .bearer_auth(&dave)
        .multipart(form)
        .send()
        .await
        .expect("POST");
    let (status, text) = message(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text.starts_with(EXHAUSTED), "{text}");
    assert_eq!(server.form_files().len(), kept);

    // What the refused bodies had been charged was given back: 30,000 still fit.
    let third = random_bytes(30_000);
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=third.bin", server.base))
        .bearer_auth(&dave)
        .body(chunked(&third))
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::OK);
    let got = request(Method::GET, &url, &dave).send().await.expect("GET");
    assert_eq!(
        sha256_hex(&got.bytes().await.expect("body")),
        sha256_hex(&first)
    );
    // ...and then the quota is used up.
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=more.bin", server.base))
        .bearer_auth(&dave)
        .body(chunked(&random_bytes(20_000)))
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_concatenation_final_is_charged_and_held_to_the_token_max_size() {
    let server = start(&[]).await;
    let partial = [("Upload-Concat", "partial")];
    let parts = [random_bytes(30_000), random_bytes(30_000)];
    let make_parts = |auth: String| {
        let server = &server;
        let parts = &parts;
        async move {
            let mut urls = Vec::new();
            for bytes in parts {
                let url = create(server, &auth, Some(bytes.len()), &partial).await;
                let res = patch(&url, &auth, 0, bytes.clone().into()).send().await;
                assert_eq!(res.expect("PATCH").status(), StatusCode::NO_CONTENT);
                urls.push(url.trim_start_matches(&server.base).to_owned());
            }
            format!("final;{}", urls.join(" "))
        }
    };
    let post_final = |auth: String, concat: String| {
        request(Method::POST, &format!("{}/files/", server.base), &auth)
            .header("Upload-Concat", concat)
            .send()
    };

    // A token allowing 50,000 bytes per file: a 60,000-byte final is too large.
    let limited = token("erin", |c| c.max_size = Some(50_000));
    let concat = make_parts(limited.clone()).await;
    let res = post_final(limited, concat).await.expect("POST");
    assert_eq!(
        message(res).await,
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "File too large: this upload may be at most 50000 bytes".into()
        )
    );

    // The parts (60,000) and one final (60,000) do not fit 100,000: the final is refused.
    let frank = token("frank", |_| {});
    let concat = make_parts(frank.clone()).await;
    let res = post_final(frank.clone(), concat).await.expect("POST");
    let (status, text) = message(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        text.starts_with("Upload quota exceeded: 60000 of 100000 bytes used"),
        "{text}"
    );

    // A final of parts whose length is not known yet cannot be held to the quota.
    let deferred = create(&server, &frank, None, &partial).await;
    let path = deferred.trim_start_matches(&server.base);
    let res = post_final(frank.clone(), format!("final;{path}"))
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        res.text().await.expect("text"),
        "a final upload needs the lengths of all its parts while a size limit applies\n"
    );

    // Within the quota a final is made, and charged: its parts and it hold 40,000 of it.
    let grace = token("grace", |_| {});
    let small = [random_bytes(10_000), random_bytes(10_000)];
    let mut urls = Vec::new();
    for bytes in &small {
        let url = create(&server, &grace, Some(bytes.len()), &partial).await;
        let res = patch(&url, &grace, 0, bytes.clone().into()).send().await;
        assert_eq!(res.expect("PATCH").status(), StatusCode::NO_CONTENT);
        urls.push(url.trim_start_matches(&server.base).to_owned());
    }
    let res = post_final(grace.clone(), format!("final;{}", urls.join(" ")))
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::CREATED);
    let whole = format!(
        "{}{}",
        server.base,
        res.headers()["location"].to_str().expect("ascii")
    );
    let got = request(Method::GET, &whole, &grace)
        .send()
        .await
        .expect("GET");
    assert_eq!(
        sha256_hex(&got.bytes().await.expect("body")),
        sha256_hex(&small.concat())
    );
    let res = request(Method::POST, &format!("{}/files/", server.base), &grace)
        .header("Upload-Length", "60001")
        .send()
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_form_upload_that_keeps_nothing_gives_its_charge_back() {
    let server = start(&[]).await;
    let ivan = token("ivan", |_| {});
    // A raw body declaring 60,000 bytes that breaks off after 10,000: nothing is kept...
    let mut socket = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let head = format!(
        "PUT /upload/raw?name=cut.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ivan}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: 60000\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    socket
        .write_all(&random_bytes(10_000))
        .await
        .expect("bytes");
    socket.shutdown().await.expect("half close");
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(server.form_files(), Vec::<PathBuf>::new());

    // ...so nothing stays charged: the whole quota is still there for the retry.
    let bytes = random_bytes(QUOTA);
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=whole.bin", server.base))
        .bearer_auth(&ivan)
        .body(bytes.clone())
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::OK);
    let body: serde_json::Value = res.json().await.expect("json");
    let url = format!("{}{}", server.base, body["url"].as_str().expect("url"));
    let got = request(Method::GET, &url, &ivan).send().await.expect("GET");
    assert_eq!(
        sha256_hex(&got.bytes().await.expect("body")),
        sha256_hex(&bytes)
    );
}
