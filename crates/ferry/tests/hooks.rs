//! `ferry serve` with tusd's hook flags against a real hook receiver: one sender for tus and
//! the form endpoint, a pre-create refusal reaching the client, post-finish naming the file on
//! disk, and the hook counters in `/metrics`.

use std::time::Duration;

mod common;

use clap::Parser;
use ferry::{Cli, Command};
use ferry_testkit::hooks::HookReceiver;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn hook_flags_wire_one_sender_for_tus_and_the_form_endpoint() {
    let receiver = HookReceiver::start().await;
    let receiver_url = receiver.url();
    let configured = common::configure(&[
        "--hooks-http",
        &receiver_url,
        "--hooks-enabled-events",
        "pre-create,post-finish",
        "--hooks-http-forward-headers",
        "Authorization",
        "--hooks-http-retry",
        "0",
        "--hooks-http-backoff",
        "100ms",
        "--hooks-http-timeout",
        "2s",
        "--progress-hooks-interval",
        "250",
    ])
    .await;
    let hooks = &configured.config.hooks;
    assert_eq!(hooks.progress_hooks_interval, Duration::from_millis(250));
    assert_eq!(hooks.hooks_http_backoff, Duration::from_millis(100));
    let server = configured.start();
    let (base, data) = (&server.base, server.data.path());
    let client = reqwest::Client::new();

    // A tus upload in one request: post-finish names the file under the data directory.
    let bytes = random_bytes(10_000);
    let created = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "10000")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Authorization", "Bearer t0ken")
        .body(bytes.clone())
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let upload = &finished[0]["Event"]["Upload"];
    assert_eq!(upload["Size"], 10_000);
    assert_eq!(upload["Storage"]["Type"], "filestore");
    let path = upload["Storage"]["Path"].as_str().expect("path");
    assert!(
        path.starts_with(&data.join("tus").display().to_string()),
        "{path}"
    );
    assert_eq!(
        sha256_hex(&std::fs::read(path).expect("stored")),
        sha256_hex(&bytes)
    );
    let asked = receiver.of("pre-create");
    assert_eq!(
        asked[0]["Event"]["HTTPRequest"]["Header"]["Authorization"],
        json!(["Bearer t0ken"])
    );
    // post-create is not among the enabled events.
    assert!(receiver.of("post-create").is_empty());

    // The form endpoint goes through the same sender.
    let raw = client
        .put(format!("{base}/upload/raw?name=f.txt"))
        .body("form bytes")
        .send()
        .await
        .expect("raw");
    assert_eq!(raw.status(), 200);
    let finished = receiver.wait_for("post-finish", 2, WAIT).await;
    let form = finished
        .iter()
        .find(|e| e["Event"]["Upload"]["MetaData"]["filename"] == "f.txt")
        .expect("the form file's post-finish");
    let path = form["Event"]["Upload"]["Storage"]["Path"]
        .as_str()
        .expect("path");
    assert!(
        path.starts_with(&data.join("form").display().to_string()),
        "{path}"
    );

    // A refusal reaches the client.
    receiver.answer(
        "pre-create",
        json!({"RejectUpload": true, "HTTPResponse": {"StatusCode": 403, "Body": "closed"}}),
    );
    let refused = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "1")
        .send()
        .await
        .expect("create");
    assert_eq!(refused.status(), 403);
    assert_eq!(refused.text().await.expect("body"), "closed");

    // Counted in /metrics: 3 pre-create and 2 post-finish answered.
    let mut metrics = String::new();
    for _ in 0..50 {
        metrics = reqwest::get(format!("{base}/metrics"))
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        if metrics.contains("\nferry_hooks_sent_total 5\n") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        metrics.contains("\nferry_hooks_sent_total 5\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nferry_hooks_failed_total 0\n"),
        "{metrics}"
    );
    // Beside the companion's transfer counters, on the same route.
    assert!(
        metrics.contains("\nferry_companion_transfers_active 0\n"),
        "{metrics}"
    );
}

#[test]
fn unknown_hook_events_fail_at_startup() {
    let cli = Cli::try_parse_from(["ferry", "serve", "--hooks-enabled-events", "pre-upload"])
        .expect("flags parse; the list is checked when the sender is built");
    let Command::Serve(config) = cli.command;
    assert_eq!(
        config
            .hooks
            .sender()
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("invalid hook configuration: unknown hook event \"pre-upload\"")
    );
    assert!(Cli::try_parse_from(["ferry", "serve", "--hooks-http-timeout", "soon"]).is_err());
}
