//! The optional bearer-token hook on the `/s3/*` routes (real Garage behind), and a
//! CompleteMultipartUpload that fails inside a 200 answer (a fake store, since Garage never
//! answers that way).

mod common;

use axum::Router;
use axum::routing::post;
use common::s3::{Fixture, get_json_with, settings};
use ferry_auth::token::issue_legacy as issue_token;
use ferry_companion::s3::{S3State, router};
use ferry_testkit::TestServer;
use serde_json::Value;

const SECRET: &str = "host-app-shared-secret";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

#[tokio::test]
async fn tokens_are_required_and_uploads_are_bound_to_their_subject() {
    let mut f = Fixture::start_with(|g| ferry_companion::s3::S3Settings {
        auth: Some(ferry_auth::Gate::new(SECRET.as_bytes(), |_, _| true)),
        ..settings(g, "uploads/")
    })
    .await;
    let alice = issue_token(SECRET.as_bytes(), "alice", now() + 600);
    let bob = issue_token(SECRET.as_bytes(), "bob", now() + 600);
    let expired = issue_token(SECRET.as_bytes(), "alice", now() - 1);
    let forged = issue_token(b"not-the-secret", "alice", now() + 600);

    let params = f.url("/s3/params?filename=a.txt");
    for (token, message) in [
        (None, "a bearer token is required"),
        (Some(expired.as_str()), "token expired"),
        (Some(forged.as_str()), "invalid token"),
        (Some("abc"), "invalid token"),
    ] {
        let (status, body) = get_json_with(&params, token).await;
        assert_eq!((status, body["message"].as_str()), (401, Some(message)));
    }
    let (status, _) = get_json_with(&params, Some(&alice)).await;
    assert_eq!(status, 200);
    // The JWT form of `--auth-secret`, with a type limit.
    let jwt = ferry_auth::issue(
        SECRET.as_bytes(),
        &ferry_auth::Claims {
            sub: "alice".into(),
            exp: now() + 600,
            types: Some(vec!["image/*".into()]),
            ..Default::default()
        },
    );
    let (status, _) = get_json_with(
        &f.url("/s3/params?filename=a.png&type=image/png"),
        Some(&jwt),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = get_json_with(&params, Some(&jwt)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            415,
            Some("File type not allowed: accepted types are image/*")
        )
    );

    f.token = Some(alice.clone());
    let (upload_id, key) = f.create("mine.bin").await;
    let k: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
    for path in [
        format!("/s3/multipart/{upload_id}?key={k}"),
        format!("/s3/multipart/{upload_id}/1?key={k}"),
        format!("/s3/multipart/{upload_id}/batch?key={k}&partNumbers=1"),
    ] {
        let (status, body) = get_json_with(&f.url(&path), Some(&bob)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (403, Some("this upload belongs to someone else")),
            "{path}"
        );
        let (status, _) = get_json_with(&f.url(&path), Some(&alice)).await;
        assert_eq!(status, 200, "{path}");
    }
    f.token = Some(bob.clone());
    let (status, _) = f
        .post_json(
            &format!("/s3/multipart/{upload_id}/complete?key={k}"),
            r#"{"parts":[{"PartNumber":1,"ETag":"x"}]}"#,
        )
        .await;
    assert_eq!(status, 403);
    let abort = f.url(&format!("/s3/multipart/{upload_id}?key={k}"));
    let resp = f
        .http
        .delete(&abort)
        .bearer_auth(&bob)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), 403);
    assert!(f.garage.list_multipart_uploads().await.contains(&upload_id));
    let resp = f
        .http
        .delete(&abort)
        .bearer_auth(&alice)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), 200);
    assert!(!f.garage.list_multipart_uploads().await.contains(&upload_id));
}

#[tokio::test]
async fn a_failure_inside_a_200_complete_answer_is_an_error() {
    let store = Router::new().route(
        "/{*path}",
        post(|| async {
            "<?xml version=\"1.0\"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>"
        }),
    );
    let store = TestServer::start(store).await;
    let state = S3State::new(ferry_companion::s3::S3Settings {
        bucket: ferry_s3::S3Bucket {
            endpoint: store.url(""),
            bucket: "b".into(),
            region: "r".into(),
            access_key: "AK".into(),
            secret_key: ferry_auth::Secret::new("SK"),
            force_path_style: true,
            key_prefix: String::new(),
        },
        expires: std::time::Duration::from_secs(60),
        auth: None,
    })
    .expect("settings");
    let server = TestServer::start(router(state)).await;
    let resp = reqwest::Client::new()
        .post(server.url("/s3/multipart/up1/complete?key=k1"))
        .body(r#"{"parts":[{"PartNumber":1,"ETag":"\"e\""}]}"#)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), 502);
    let body: Value = resp.json().await.expect("json");
    assert_eq!(
        body["message"],
        "CompleteMultipartUpload failed: We encountered an internal error. Please try again."
    );
}
