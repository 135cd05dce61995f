//! `ferry serve --auth-secret`: every protected route refuses a missing, forged or expired
//! token with the exact status and message; uploads, stored files and transfers belong to their
//! subject (another subject gets 404); the token's limits and the per-subject quota apply; open
//! routes stay open. Real HTTP on loopback against the whole server.

mod common;

use common::{Server, message, now, tus};
use ferry_auth::Claims;
use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::StreamExt;
use reqwest::{Method, StatusCode};

const SECRET: &str = "application-shared-secret";

/// `ferry serve --no-ui --auth-secret SECRET` plus `extra`; the parsed config's `Debug` (what a
/// log line would show) never holds the secret.
async fn start(extra: &[&str]) -> Server {
    let mut args = vec!["--no-ui", "--auth-secret", SECRET];
    args.extend_from_slice(extra);
    let configured = common::configure(&args).await;
    let debug = format!("{:?}", configured.config);
    assert!(!debug.contains(SECRET), "the secret leaks into Debug");
    configured.start()
}

fn token(sub: &str, edit: impl FnOnce(&mut Claims)) -> String {
    common::token(SECRET, sub, edit)
}

/// Creates a tus upload of `len` bytes as `auth`; returns its URL.
async fn create(server: &Server, auth: &str, len: usize, meta: &str) -> String {
    let bearer = format!("Bearer {auth}");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Upload-Metadata", meta),
    ];
    let client = reqwest::Client::new();
    let location = common::create_with(&client, &server.base, len, &headers).await;
    format!("{}{location}", server.base)
}

#[tokio::test]
async fn every_protected_route_refuses_missing_forged_and_expired_tokens() {
    let server = start(&[]).await;
    let alice = token("alice", |_| {});
    let upload = create(&server, &alice, 10, "").await;
    let forged = ferry_auth::issue(
        b"not-the-secret",
        &Claims {
            sub: "alice".into(),
            exp: now() + 600,
            ..Claims::default()
        },
    );
    let expired = token("alice", |c| c.exp = now() - 1);
    let upload_path = upload.trim_start_matches(&server.base).to_owned();
    let routes: Vec<(Method, String)> = vec![
        (Method::POST, "/files/".into()),
        (Method::HEAD, upload_path.clone()),
        (Method::PATCH, upload_path.clone()),
        (Method::DELETE, upload_path.clone()),
        (Method::GET, upload_path.clone()),
        (Method::POST, "/upload".into()),
        (Method::PUT, "/upload/raw?name=a.txt".into()),
        (
            Method::GET,
            "/upload/0123456789abcdef0123456789abcdef".into(),
        ),
        (Method::POST, "/url/meta".into()),
        (Method::POST, "/url/get".into()),
        (Method::GET, "/api/0123456789abcdef".into()),
        (Method::GET, "/drive/list/root".into()),
        (Method::POST, "/drive/get/abc".into()),
        (Method::GET, "/drive/logout".into()),
        (Method::GET, "/drive/thumbnail/abc".into()),
        (Method::GET, "/instagram/refresh-token".into()),
    ];
    for (method, path) in &routes {
        let url = format!("{}{path}", server.base);
        for (auth, want) in [
            (None, "a bearer token is required"),
            (Some(forged.as_str()), "invalid token"),
            (Some(expired.as_str()), "token expired"),
            (Some("not.a.token"), "invalid token"),
        ] {
            let res = tus(method.clone(), &url, auth).send().await.expect("send");
            assert_eq!(
                res.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path} {want}"
            );
            let scheme = res.headers()["www-authenticate"].to_str().expect("ascii");
            assert!(scheme.starts_with("Bearer"), "{method} {path}: {scheme}");
            if *method != Method::HEAD {
                assert_eq!(message(res).await.1, want, "{method} {path}");
            }
        }
        // With a valid token the gate lets the request through to the route itself.
        let res = tus(method.clone(), &url, Some(&alice))
            .send()
            .await
            .expect("send");
        assert_ne!(res.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // The token may come as `access_token` where a browser cannot set a header (the loop
    // above deleted the first upload).
    let upload = create(&server, &alice, 10, "").await;
    let res = tus(
        Method::HEAD,
        &format!("{upload}?access_token={alice}"),
        None,
    )
    .send()
    .await
    .expect("HEAD");
    assert_eq!(res.status(), StatusCode::OK);
    // A page on another origin can read the refusal.
    let res = tus(Method::POST, &format!("{}/files/", server.base), None)
        .header("Origin", "https://app.example")
        .send()
        .await
        .expect("POST");
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    // Open routes stay open.
    for (method, path) in [
        (Method::GET, "/health"),
        (Method::GET, "/metrics"),
        (Method::GET, "/providers"),
        (Method::OPTIONS, "/files/"),
        (Method::GET, "/drive/connect"),
    ] {
        let res = tus(method.clone(), &format!("{}{path}", server.base), None)
            .send()
            .await
            .expect("send");
        assert_ne!(res.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
    }
}

#[tokio::test]
async fn uploads_and_stored_files_belong_to_their_subject() {
    let server = start(&[]).await;
    let alice = token("alice", |_| {});
    let bob = token("bob", |_| {});
    let bytes = random_bytes(20_000);
    let upload = create(&server, &alice, bytes.len(), "filename YS5iaW4=").await;
    let res = tus(Method::PATCH, &upload, Some(&alice))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[..5_000].to_vec())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    // Bob sees nothing: every verb answers as for an unknown upload.
    for method in [Method::HEAD, Method::PATCH, Method::GET, Method::DELETE] {
        let mut req = tus(method.clone(), &upload, Some(&bob));
        if method == Method::PATCH {
            req = req
                .header("Upload-Offset", "5000")
                .header("Content-Type", "application/offset+octet-stream")
                .body(vec![0u8; 10]);
        }
        let res = req.send().await.expect("send");
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{method}");
    }
    // Nor can he build a final upload on Alice's part.
    let part = tus(
        Method::POST,
        &format!("{}/files/", server.base),
        Some(&alice),
    )
    .header("Upload-Length", "3")
    .header("Upload-Concat", "partial")
    .send()
    .await
    .expect("POST");
    let part = part.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let res = tus(Method::POST, &format!("{}/files/", server.base), Some(&bob))
        .header("Upload-Concat", format!("final;{part}"))
        .send()
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    // Alice goes on where she was and gets her bytes back.
    let res = tus(Method::HEAD, &upload, Some(&alice))
        .send()
        .await
        .expect("HEAD");
    assert_eq!(res.headers()["upload-offset"], "5000");
    let res = tus(Method::PATCH, &upload, Some(&alice))
        .header("Upload-Offset", "5000")
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[5_000..].to_vec())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    let got = tus(Method::GET, &upload, Some(&alice))
        .send()
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&got), sha256_hex(&bytes));

    // The form endpoint: a stored file is fetched back by its owner only.
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=b.bin", server.base))
        .bearer_auth(&alice)
        .body(bytes.clone())
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::OK);
    let stored: serde_json::Value = res.json().await.expect("json");
    let url = stored["url"].as_str().expect("url").to_owned();
    let url = if url.starts_with("http") {
        url
    } else {
        format!("{}{url}", server.base)
    };
    let res = tus(Method::GET, &url, Some(&bob))
        .send()
        .await
        .expect("GET");
    assert_eq!(
        message(res).await,
        (StatusCode::NOT_FOUND, "No such file".into())
    );
    let got = tus(Method::GET, &url, Some(&alice))
        .send()
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&got), sha256_hex(&bytes));
}

#[tokio::test]
async fn token_limits_and_the_quota_apply() {
    let server = start(&["--quota-bytes", "1000", "--quota-window", "3600"]).await;
    let files = format!("{}/files/", server.base);
    let limited = token("carol", |c| {
        c.max_size = Some(100);
        c.types = Some(vec!["image/*".into()]);
    });
    let post = |auth: String, len: Option<u64>, meta: &'static str| {
        let mut req = tus(Method::POST, &files, Some(&auth)).header("Upload-Metadata", meta);
        req = match len {
            Some(len) => req.header("Upload-Length", len.to_string()),
            None => req.header("Upload-Defer-Length", "1"),
        };
        req.send()
    };
    let png = "filetype aW1hZ2UvcG5n"; // image/png
    let text = "filetype dGV4dC9wbGFpbg=="; // text/plain
    assert_eq!(
        message(post(limited.clone(), Some(101), png).await.expect("POST")).await,
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "File too large: this upload may be at most 100 bytes".into()
        )
    );
    assert_eq!(
        message(post(limited.clone(), Some(10), text).await.expect("POST")).await,
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "File type not allowed: accepted types are image/*".into()
        )
    );
    // A size limit needs the length up front.
    let res = post(limited.clone(), None, png).await.expect("POST");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        post(limited, Some(100), png).await.expect("POST").status(),
        StatusCode::CREATED
    );

    // The quota: 1000 bytes per subject per hour.
    let dave = token("dave", |_| {});
    assert_eq!(
        post(dave.clone(), Some(600), "")
            .await
            .expect("POST")
            .status(),
        StatusCode::CREATED
    );
    let res = post(dave.clone(), Some(600), "").await.expect("POST");
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((3590..=3600).contains(&retry), "{retry}");
    let (status, text) = message(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        text.starts_with("Upload quota exceeded: 600 of 1000 bytes used"),
        "{text}"
    );
    assert_eq!(
        message(post(dave.clone(), Some(1001), "").await.expect("POST")).await,
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "File too large for the upload quota of 1000 bytes per 3600 seconds".into()
        )
    );
    // The form endpoint draws on the same quota.
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=x.bin", server.base))
        .bearer_auth(&dave)
        .body(vec![7u8; 500])
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    // Another subject has a quota of its own.
    let erin = token("erin", |_| {});
    assert_eq!(
        post(erin, Some(1000), "").await.expect("POST").status(),
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn a_link_import_and_its_progress_socket_belong_to_their_subject() {
    let bytes = random_bytes(300_000);
    let origin = Origin::start(
        bytes.clone(),
        OriginOptions {
            ranges: true,
            content_length: true,
            ..OriginOptions::default()
        },
    )
    .await;
    let server = start(&["--allow-local-urls"]).await;
    let alice = token("alice", |_| {});
    let bob = token("bob", |_| {});
    let body = serde_json::json!({
        "url": origin.file_url(),
        "protocol": "tus",
        "endpoint": format!("{}/files/", server.base),
        "size": bytes.len(),
        "metadata": {"name": "import.bin"},
    });
    let res = reqwest::Client::new()
        .post(format!("{}/url/get", server.base))
        .bearer_auth(&alice)
        .json(&body)
        .send()
        .await
        .expect("url/get");
    assert_eq!(res.status(), StatusCode::OK);
    let transfer: serde_json::Value = res.json().await.expect("json");
    let transfer = transfer["token"].as_str().expect("token").to_owned();
    let socket = |auth: &str| {
        format!(
            "{}/api/{transfer}?access_token={auth}",
            server.base.replace("http://", "ws://")
        )
    };
    // Bob cannot watch or steer it.
    let refused = tokio_tungstenite::connect_async(socket(&bob)).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            assert_eq!(res.status(), StatusCode::NOT_FOUND);
        }
        other => panic!("bob's socket was not refused: {other:?}"),
    }
    // Alice's socket starts it and sees it finish into her own upload (the server passes her
    // token on to its own tus endpoint).
    let (mut ws, _) = tokio_tungstenite::connect_async(socket(&alice))
        .await
        .expect("alice's socket");
    let url = loop {
        let frame = ws.next().await.expect("a frame").expect("frame");
        let frame: serde_json::Value =
            serde_json::from_str(frame.to_text().expect("text")).expect("json");
        match frame["action"].as_str() {
            Some("success") => break frame["payload"]["url"].as_str().expect("url").to_owned(),
            Some("error") => panic!("transfer failed: {frame}"),
            _ => {}
        }
    };
    let got = tus(Method::GET, &url, Some(&alice))
        .send()
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&got), sha256_hex(&bytes));
    let res = tus(Method::HEAD, &url, Some(&bob))
        .send()
        .await
        .expect("HEAD");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}
