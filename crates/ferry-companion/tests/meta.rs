//! `POST /url/meta` against real origins: names, types, sizes, HEAD fallback, error statuses.

mod common;

use common::*;
use ferry_testkit::origin::{Origin, OriginOptions};
use serde_json::json;

#[tokio::test]
async fn meta_reads_name_type_and_size() {
    let opts = OriginOptions {
        disposition: Some(r#"attachment; filename="report 2026.pdf""#.into()),
        content_type: "application/pdf; charset=binary".into(),
        ..OriginOptions::default()
    };
    let origin = Origin::start(vec![0; 4321], opts).await;
    let companion = companion(config(&[]), no_names()).await;
    let (status, body) =
        post_json(&companion, "/url/meta", json!({"url": origin.file_url()})).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"name": "report 2026.pdf", "type": "application/pdf", "size": 4321})
    );
    assert_eq!(origin.gets(), 0, "HEAD was enough");
}

#[tokio::test]
async fn meta_falls_back_to_get_and_reports_unknown_size() {
    let opts = OriginOptions {
        no_head: true,
        content_length: false,
        ..OriginOptions::default()
    };
    let origin = Origin::start(vec![0; 100], opts).await;
    let companion = companion(config(&[]), no_names()).await;
    let (status, body) =
        post_json(&companion, "/url/meta", json!({"url": origin.file_url()})).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"name": "file", "type": "application/octet-stream", "size": null})
    );
    assert_eq!(origin.gets(), 1);
}

#[tokio::test]
async fn meta_errors_follow_companion_statuses() {
    let origin = Origin::start(vec![0; 10], OriginOptions::default()).await;
    let companion = companion(config(&[]), no_names()).await;
    let missing = origin.server.url("/missing");
    let cases = [
        (json!({"url": missing}), 424),
        (json!({"nope": 1}), 400),
        (json!({"url": "not a url"}), 400),
        (json!({"url": "http://unknown.test/x"}), 502),
    ];
    for (body, want) in cases {
        let (status, answer) = post_json(&companion, "/url/meta", body.clone()).await;
        assert_eq!(status, want, "{body}: {answer}");
        assert!(answer["message"].is_string(), "{answer}");
    }
    let resp = reqwest::Client::new()
        .post(companion.url("/url/meta"))
        .body("{not json")
        .header("content-type", "application/json")
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(body, json!({"message": "Invalid request body"}));
}

#[tokio::test]
async fn meta_refuses_files_over_the_size_cap() {
    let origin = Origin::start(vec![0; 2000], OriginOptions::default()).await;
    let mut cfg = config(&[]);
    cfg.max_file_size = Some(1000);
    let companion = companion(cfg, no_names()).await;
    let (status, body) =
        post_json(&companion, "/url/meta", json!({"url": origin.file_url()})).await;
    assert_eq!(
        (status, body),
        (400, json!({"message": "File size exceeds limit"}))
    );
}

#[tokio::test]
async fn cors_allows_uppy_headers_and_exposes_i_am() {
    let mut cfg = config(&[]);
    cfg.cors_origins = vec!["https://app.example".into()];
    let companion = companion(cfg, no_names()).await;
    let resp = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, companion.url("/url/meta"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "uppy-auth-token,content-type",
        )
        .send()
        .await
        .expect("preflight");
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "https://app.example");
    assert_eq!(h["access-control-allow-credentials"], "true");
    let allowed = h["access-control-allow-headers"].to_str().expect("ascii");
    assert!(allowed.contains("uppy-auth-token") && allowed.contains("uppy-credentials-params"));
    let other = reqwest::Client::new()
        .post(companion.url("/url/meta"))
        .header("origin", "https://evil.example")
        .json(&json!({"url": "x"}))
        .send()
        .await
        .expect("request");
    assert!(other.headers().get("access-control-allow-origin").is_none());
    let simple = reqwest::Client::new()
        .post(companion.url("/url/meta"))
        .header("origin", "https://app.example")
        .json(&json!({"url": "x"}))
        .send()
        .await
        .expect("request");
    let exposed = simple.headers()["access-control-expose-headers"]
        .to_str()
        .expect("ascii");
    assert!(exposed.contains("i-am"));
}
