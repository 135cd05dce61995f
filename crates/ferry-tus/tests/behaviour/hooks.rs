//! Lifecycle hooks against a real hook receiver over HTTP (ferry-testkit's `HookReceiver`):
//! what each event carries, and what a blocking hook's answer does to the client's request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_hooks::{EnabledEvents, HookSender, HookType, HooksConfig};
use ferry_testkit::hooks::{HookReceiver, unreachable_url};
use ferry_testkit::{random_bytes, sha256_hex};
use ferry_tus::TusConfig;
use serde_json::json;

use crate::common::{Endpoint, V};

const WAIT: Duration = Duration::from_secs(5);

fn hooks_config(url: String, events: &[HookType]) -> HooksConfig {
    HooksConfig {
        http: Some(url),
        enabled_events: EnabledEvents::of(events),
        http_retry: 0,
        http_backoff: Duration::from_millis(10),
        timeout: Duration::from_secs(3),
        progress_interval: Duration::from_millis(50),
        ..HooksConfig::default()
    }
}

async fn endpoint(config: &HooksConfig) -> (Endpoint, HookSender) {
    let sender = HookSender::from_config(config)
        .expect("hook config")
        .expect("a sender");
    let tus = TusConfig {
        hooks: Arc::new(sender.clone()),
        ..TusConfig::default()
    };
    (Endpoint::with(tus).await, sender)
}

/// Every entry of the store's directory, recursively, as relative paths.
fn stored_files(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn pre_create_rejection_reaches_the_client_and_stores_nothing() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"RejectUpload": true, "HTTPResponse": {"StatusCode": 403,
            "Body": "{\"message\":\"PDF uploads are closed today\"}",
            "Header": {"Content-Type": "application/json", "X-Reason": "policy"}}}),
    );
    let (ep, _sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let res = ep
        .send(
            "POST",
            "/files/",
            &[
                V,
                ("Upload-Length", "5"),
                ("Upload-Metadata", "filename YS5wZGY="),
                ("Authorization", "Bearer abc"),
            ],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.text(), r#"{"message":"PDF uploads are closed today"}"#);
    assert_eq!(res.header("content-type"), Some("application/json"));
    assert_eq!(res.header("x-reason"), Some("policy"));
    assert_eq!(res.header("tus-resumable"), Some("1.0.0"));
    assert!(stored_files(ep.dir.path()).is_empty());

    let events = receiver.of("pre-create");
    assert_eq!(events.len(), 1);
    let upload = &events[0]["Event"]["Upload"];
    assert_eq!(upload["ID"], "");
    assert_eq!(upload["Size"], 5);
    assert_eq!(upload["SizeIsDeferred"], false);
    assert_eq!(upload["MetaData"], json!({"filename": "a.pdf"}));
    assert_eq!(upload["Storage"], json!(null));
    let request = &events[0]["Event"]["HTTPRequest"];
    assert_eq!(request["Method"], "POST");
    assert_eq!(request["URI"], "/files/");
    assert!(
        request["RemoteAddr"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:"))
    );
    assert_eq!(request["Header"]["Authorization"], json!(["Bearer abc"]));
    // Rejected: nothing was created, so nothing else was sent.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(receiver.of("post-create").is_empty());
}

#[tokio::test]
async fn pre_create_changes_id_metadata_and_storage_path() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"ChangeFileInfo": {"ID": "user-42_report",
            "MetaData": {"filename": "renamed.pdf", "owner": "42"},
            "Storage": {"Path": "./users/42/report.pdf"}},
            "HTTPResponse": {"Header": {"X-Upload-Owner": "42"}}}),
    );
    let (ep, _sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let res = ep
        .send(
            "POST",
            "/files/",
            &[
                V,
                ("Upload-Length", "11"),
                ("Upload-Metadata", "filename YS5wZGY="),
            ],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.header("location"), Some("/files/user-42_report"));
    assert_eq!(res.header("x-upload-owner"), Some("42"));

    let bytes = random_bytes(11);
    let patched = ep.patch("/files/user-42_report", 0, &bytes).await;
    assert_eq!(patched.status, 204, "{}", patched.text());
    let head = ep
        .send("HEAD", "/files/user-42_report", &[V], Vec::new())
        .await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("upload-offset"), Some("11"));
    // filename renamed.pdf, owner 42, in the canonical rendering.
    assert_eq!(
        head.header("upload-metadata"),
        Some("filename cmVuYW1lZC5wZGY=,owner NDI=")
    );
    let placed = ep.dir.path().join("users/42/report.pdf");
    let stored = std::fs::read(&placed).expect("bytes at the hook's path");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));

    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let upload = &finished[0]["Event"]["Upload"];
    assert_eq!(upload["ID"], "user-42_report");
    assert_eq!(upload["Size"], 11);
    assert_eq!(upload["Offset"], 11);
    assert_eq!(
        upload["MetaData"],
        json!({"filename": "renamed.pdf", "owner": "42"})
    );
    assert_eq!(upload["Storage"]["Type"], "filestore");
    assert_eq!(upload["Storage"]["Path"], placed.to_string_lossy().as_ref());

    // The same id again is refused, and leaves the first upload alone.
    let again = ep
        .send("POST", "/files/", &[V, ("Upload-Length", "3")], Vec::new())
        .await;
    assert_eq!(again.status, 409);
    assert_eq!(
        again.text(),
        "an upload with this id or storage key already exists\n"
    );
    assert_eq!(std::fs::read(&placed).expect("still there"), stored);

    // Termination removes the bytes at the hook's path too.
    let deleted = ep
        .send("DELETE", "/files/user-42_report", &[V], Vec::new())
        .await;
    assert_eq!(deleted.status, 204);
    assert!(!placed.exists());
    let gone = ep
        .send("HEAD", "/files/user-42_report", &[V], Vec::new())
        .await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn unsafe_changes_from_a_hook_are_a_502_and_create_nothing() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"ChangeFileInfo": {"ID": "../../etc/passwd"}}),
    );
    let (ep, sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let res = ep
        .send("POST", "/files/", &[V, ("Upload-Length", "3")], Vec::new())
        .await;
    assert_eq!(res.status, 502);
    assert_eq!(res.text(), "hook receiver sent an invalid response\n");
    assert!(stored_files(ep.dir.path()).is_empty());
    assert_eq!(sender.stats().failed, 1);
}

#[tokio::test]
async fn created_received_and_finished_events_carry_offsets_and_storage() {
    let receiver = HookReceiver::start().await;
    let (ep, sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let bytes = random_bytes(64 * 1024);
    let path = ep.create(Some(bytes.len() as u64), &[]).await;
    let id = path.rsplit('/').next().expect("id").to_owned();

    // A body trickling in over ~400 ms: post-receive is due every 50 ms while it moves.
    let chunks: Vec<Bytes> = bytes.chunks(8 * 1024).map(Bytes::copy_from_slice).collect();
    let stream = futures_util::stream::unfold(chunks.into_iter(), |mut rest| async move {
        let chunk = rest.next()?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some((Ok::<_, std::io::Error>(chunk), rest))
    });
    let res = ep
        .client
        .patch(ep.url(&path))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", bytes.len().to_string())
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .expect("patch");
    assert_eq!(res.status(), 204);

    let created = receiver.wait_for("post-create", 1, WAIT).await;
    assert_eq!(created[0]["Event"]["Upload"]["ID"], id.as_str());
    assert_eq!(created[0]["Event"]["Upload"]["Offset"], 0);
    let data = ep.dir.path().join(&id);
    let info = ep.dir.path().join(format!("{id}.info"));
    let storage = json!({"Type": "filestore", "Path": data.to_string_lossy(),
        "InfoPath": info.to_string_lossy()});
    assert_eq!(created[0]["Event"]["Upload"]["Storage"], storage);

    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let upload = &finished[0]["Event"]["Upload"];
    assert_eq!(upload["Size"], bytes.len());
    assert_eq!(upload["Offset"], bytes.len());
    assert_eq!(upload["Storage"], storage);
    assert_eq!(finished[0]["Event"]["HTTPRequest"]["Method"], "PATCH");
    assert_eq!(
        sha256_hex(&std::fs::read(&data).expect("data")),
        sha256_hex(&bytes)
    );

    let received = receiver.wait_for("post-receive", 2, WAIT).await;
    let offsets: Vec<u64> = received
        .iter()
        .map(|e| e["Event"]["Upload"]["Offset"].as_u64().expect("offset"))
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    assert_eq!(
        offsets.last().copied(),
        Some(bytes.len() as u64),
        "{offsets:?}"
    );
    // Throttled to one per interval, so never more than one per chunk.
    assert!(offsets.len() <= 8, "{offsets:?}");
    assert!(offsets[0] < bytes.len() as u64, "{offsets:?}");
    sender.flush().await;
    assert_eq!(sender.stats().failed, 0);
}

#[tokio::test]
async fn pre_finish_holds_the_final_answer_and_changes_it() {
    let receiver = HookReceiver::start().await;
    receiver.delay("pre-finish", Duration::from_millis(700));
    receiver.answer(
        "pre-finish",
        json!({"HTTPResponse": {"Header": {"X-Processed": "thumbnail-ready"}}}),
    );
    let (ep, _sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let path = ep.create(Some(4), &[]).await;
    let first = ep.patch(&path, 0, b"ab").await;
    assert_eq!(first.status, 204);
    assert_eq!(first.header("x-processed"), None);
    assert!(receiver.of("pre-finish").is_empty());

    let started = Instant::now();
    let last = ep.patch(&path, 2, b"cd").await;
    let waited = started.elapsed();
    assert_eq!(last.status, 204);
    assert_eq!(last.header("upload-offset"), Some("4"));
    assert_eq!(last.header("x-processed"), Some("thumbnail-ready"));
    assert!(
        waited >= Duration::from_millis(700),
        "answered after {waited:?}"
    );
    // pre-finish came first, post-finish after it.
    let order: Vec<_> = receiver
        .received()
        .iter()
        .map(|e| e["Type"].as_str().unwrap_or_default().to_owned())
        .filter(|t| t.ends_with("finish"))
        .collect();
    receiver.wait_for("post-finish", 1, WAIT).await;
    assert_eq!(order.first().map(String::as_str), Some("pre-finish"));
}

#[tokio::test]
async fn a_down_receiver_fails_blocking_hooks_with_502_and_creates_nothing() {
    let config = hooks_config(unreachable_url().await, &HookType::ALL);
    let (ep, sender) = endpoint(&config).await;
    let res = ep
        .send("POST", "/files/", &[V, ("Upload-Length", "3")], Vec::new())
        .await;
    assert_eq!(res.status, 502);
    assert_eq!(res.text(), "hook receiver unavailable\n");
    assert_eq!(res.header("tus-resumable"), Some("1.0.0"));
    assert!(stored_files(ep.dir.path()).is_empty());
    assert_eq!(sender.stats().failed, 1);
}

#[tokio::test]
async fn a_slow_receiver_is_a_504_after_the_timeout() {
    let receiver = HookReceiver::start().await;
    // Far longer than any machine's stall: an answer before it can only be the timeout's.
    receiver.delay("pre-create", Duration::from_secs(60));
    let config = HooksConfig {
        timeout: Duration::from_millis(300),
        ..hooks_config(receiver.url(), &HookType::ALL)
    };
    let (ep, _sender) = endpoint(&config).await;
    let started = Instant::now();
    let res = ep
        .send("POST", "/files/", &[V, ("Upload-Length", "3")], Vec::new())
        .await;
    assert_eq!(res.status, 504);
    assert_eq!(res.text(), "hook receiver did not answer in time\n");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(stored_files(ep.dir.path()).is_empty());
}

#[tokio::test]
async fn notifications_to_a_down_receiver_never_stall_the_upload() {
    let config = HooksConfig {
        http_retry: 2,
        // Each notification retries for 2 s: a stalled upload would take 4 s at least.
        http_backoff: Duration::from_secs(1),
        ..hooks_config(
            unreachable_url().await,
            &[
                HookType::PostCreate,
                HookType::PostReceive,
                HookType::PostFinish,
            ],
        )
    };
    let (ep, sender) = endpoint(&config).await;
    let bytes = random_bytes(1000);
    let started = Instant::now();
    let path = ep.create(Some(1000), &[]).await;
    let res = ep.patch(&path, 0, &bytes).await;
    assert_eq!(res.status, 204);
    assert!(started.elapsed() < Duration::from_secs(2));
    tokio::time::timeout(WAIT, sender.flush())
        .await
        .expect("flushed");
    // post-create and post-finish (and a last post-receive), each given up after 3 attempts.
    let stats = sender.stats();
    assert_eq!((stats.sent, stats.dropped), (0, 0));
    assert!(stats.failed >= 2, "{stats:?}");
}

#[tokio::test]
async fn notifications_are_retried_until_the_receiver_answers() {
    let receiver = HookReceiver::start().await;
    receiver.fail("post-finish", 2);
    let config = HooksConfig {
        http_retry: 3,
        ..hooks_config(receiver.url(), &[HookType::PostFinish])
    };
    let (ep, sender) = endpoint(&config).await;
    let path = ep.create(Some(3), &[]).await;
    assert_eq!(ep.patch(&path, 0, b"abc").await.status, 204);
    tokio::time::timeout(WAIT, sender.flush())
        .await
        .expect("flushed");
    assert_eq!(receiver.failed("post-finish"), 2);
    assert_eq!(receiver.of("post-finish").len(), 3);
    assert_eq!((sender.stats().sent, sender.stats().failed), (1, 0));
}

#[tokio::test]
async fn pre_terminate_can_refuse_the_deletion() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-terminate",
        json!({"RejectTermination": true,
            "HTTPResponse": {"StatusCode": 423, "Body": "held for review"}}),
    );
    let (ep, _sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let path = ep.create(Some(3), &[]).await;
    assert_eq!(ep.patch(&path, 0, b"abc").await.status, 204);
    let refused = ep.send("DELETE", &path, &[V], Vec::new()).await;
    assert_eq!(refused.status, 423);
    assert_eq!(refused.text(), "held for review");
    assert_eq!(ep.send("HEAD", &path, &[V], Vec::new()).await.status, 200);
    let asked = receiver.of("pre-terminate");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["Event"]["Upload"]["Offset"], 3);

    receiver.answer("pre-terminate", json!({}));
    assert_eq!(ep.send("DELETE", &path, &[V], Vec::new()).await.status, 204);
    assert_eq!(ep.send("HEAD", &path, &[V], Vec::new()).await.status, 404);
    let told = receiver.wait_for("post-terminate", 1, WAIT).await;
    assert_eq!(
        told[0]["Event"]["Upload"]["ID"],
        path.rsplit('/').next().unwrap_or_default()
    );
}

#[tokio::test]
async fn stop_upload_from_post_receive_ends_the_request() {
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "post-receive",
        json!({"StopUpload": true, "HTTPResponse": {"StatusCode": 400, "Body": "quota used up"}}),
    );
    let (ep, _sender) = endpoint(&hooks_config(receiver.url(), &HookType::ALL)).await;
    let total = 100 * 1024;
    let path = ep.create(Some(total), &[]).await;
    // 100 chunks 20 ms apart: two seconds if nothing stops it.
    let stream = futures_util::stream::unfold(0u32, |n| async move {
        if n == 100 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from(vec![7u8; 1024])), n + 1))
    });
    let res = ep
        .client
        .patch(ep.url(&path))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .expect("patch");
    assert_eq!(res.status(), 400);
    assert_eq!(res.text().await.expect("body"), "quota used up");
    let offset = ep.store_offset(&path).await;
    assert!(offset < total, "stopped at {offset}");
}
