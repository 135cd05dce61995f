//! The form endpoint's hooks against a real hook receiver over HTTP: a pre-create refusal
//! reaches the client and stores nothing; post-create and post-finish name each stored file's
//! path and size.

use std::sync::Arc;
use std::time::Duration;

mod common;

use common::Server;
use ferry_hooks::{EnabledEvents, HookSender, HookType, HooksConfig};
use ferry_testkit::hooks::{HookReceiver, unreachable_url};
use ferry_testkit::{random_bytes, sha256_hex};
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

/// The endpoint with every hook event sent to `url`, no retries.
async fn start(url: String) -> Server {
    let sender = HookSender::from_config(&HooksConfig {
        http: Some(url),
        enabled_events: EnabledEvents::of(&HookType::ALL),
        http_retry: 0,
        timeout: Duration::from_secs(3),
        ..HooksConfig::default()
    })
    .expect("config")
    .expect("sender");
    common::start(None, |s| s.with_hooks(Arc::new(sender))).await
}

#[tokio::test]
async fn a_refusal_reaches_the_client_and_stores_nothing() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"RejectUpload": true, "HTTPResponse": {"StatusCode": 403,
            "Body": "{\"message\":\"no executables\"}",
            "Header": {"Content-Type": "application/json"}}}),
    );
    let server = start(receiver.url()).await;
    let form = Form::new().part(
        "file",
        Part::bytes(b"MZ...".to_vec())
            .file_name("setup.exe")
            .mime_str("application/x-msdownload")
            .expect("mime"),
    );
    let res = server.post_form(form).await;
    assert_eq!(res.status(), 403);
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(
        res.text().await.expect("body"),
        r#"{"message":"no executables"}"#
    );
    assert_eq!(server.stored().len(), 0);
    let asked = receiver.of("pre-create");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0]["Event"]["Upload"]["MetaData"],
        json!({"filename": "setup.exe", "filetype": "application/x-msdownload"})
    );
    assert_eq!(asked[0]["Event"]["HTTPRequest"]["URI"], "/upload");
}

#[tokio::test]
async fn each_stored_file_is_reported_with_its_path_and_size() {
    let receiver = HookReceiver::start().await;
    let server = start(receiver.url()).await;
    let (a, b) = (random_bytes(70_000), random_bytes(123));
    let form = Form::new()
        .part("files[]", Part::bytes(a.clone()).file_name("a.bin"))
        .part("files[]", Part::bytes(b.clone()).file_name("b.txt"));
    let res = server.post_form(form).await;
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.expect("json");
    let finished = receiver.wait_for("post-finish", 2, WAIT).await;
    let created = receiver.wait_for("post-create", 2, WAIT).await;
    assert_eq!(created.len(), 2);
    for (i, bytes) in [a, b].iter().enumerate() {
        let url = answer["files"][i]["url"].as_str().expect("url");
        let id = url.rsplit('/').next().expect("id");
        let event = finished
            .iter()
            .find(|e| e["Event"]["Upload"]["ID"] == id)
            .expect("a post-finish for each file");
        let upload = &event["Event"]["Upload"];
        assert_eq!(upload["Size"], bytes.len());
        assert_eq!(upload["Offset"], bytes.len());
        assert_eq!(upload["Storage"]["Type"], "filestore");
        let path = upload["Storage"]["Path"].as_str().expect("path");
        assert_eq!(
            sha256_hex(&std::fs::read(path).expect("stored")),
            sha256_hex(bytes)
        );
        assert!(path.starts_with(&server.dir.to_string_lossy().into_owned()));
    }
}

#[tokio::test]
async fn raw_uploads_pass_the_same_hooks() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"RejectUpload": true, "HTTPResponse": {"StatusCode": 413, "Body": "over quota"}}),
    );
    let server = start(receiver.url()).await;
    let client = reqwest::Client::new();
    let refused = client
        .put(server.url("/upload/raw?name=big.iso"))
        .body(vec![1u8; 2048])
        .send()
        .await
        .expect("put");
    assert_eq!(refused.status(), 413);
    assert_eq!(refused.text().await.expect("body"), "over quota");
    assert_eq!(
        receiver.of("pre-create")[0]["Event"]["Upload"]["Size"],
        2048
    );
    assert_eq!(server.stored().len(), 0);

    receiver.answer("pre-create", json!({}));
    let bytes = random_bytes(4096);
    let ok = client
        .put(server.url("/upload/raw?name=ok.bin"))
        .body(bytes.clone())
        .send()
        .await
        .expect("put");
    assert_eq!(ok.status(), 200);
    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let path = finished[0]["Event"]["Upload"]["Storage"]["Path"]
        .as_str()
        .expect("path");
    assert_eq!(
        sha256_hex(&std::fs::read(path).expect("stored")),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn a_down_receiver_is_a_502_with_a_message() {
    let server = start(unreachable_url().await).await;
    let res = reqwest::Client::new()
        .put(server.url("/upload/raw?name=x"))
        .body("abc")
        .send()
        .await
        .expect("put");
    assert_eq!(res.status(), 502);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body, json!({"message": "hook receiver unavailable"}));
    assert_eq!(server.stored().len(), 0);
}
