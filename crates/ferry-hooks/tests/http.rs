//! The HTTP sender against a real receiver on loopback: the JSON it posts, the decisions it
//! returns, and how it behaves when the receiver refuses, fails, hangs or is down.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use common::{Receiver, closed_url, config, event, json_answer};
use ferry_hooks::{
    EnabledEvents, HookDecision, HookError, HookEvent, HookSender, HookStats, HookType, Hooks,
    HooksConfig, HttpRequestInfo, StopSignal, Storage, Upload,
};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::time::Instant;

fn sender(config: &HooksConfig) -> HookSender {
    HookSender::from_config(config)
        .expect("valid config")
        .expect("a sender")
}

fn client_request() -> HttpRequestInfo {
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("ferry.test"));
    headers.insert("tus-resumable", HeaderValue::from_static("1.0.0"));
    headers.insert("authorization", HeaderValue::from_static("Bearer abc"));
    headers.insert("cookie", HeaderValue::from_static("session=1"));
    let uri: Uri = "/files/".parse().expect("uri");
    let addr: SocketAddr = "127.0.0.1:59395".parse().expect("addr");
    HttpRequestInfo::from_parts(&Method::POST, &uri, Some(addr), &headers)
}

async fn flush(sender: &HookSender) {
    tokio::time::timeout(Duration::from_secs(10), sender.flush())
        .await
        .expect("notifications settle in time");
}

#[tokio::test]
async fn posts_tusd_json_and_forwards_the_configured_headers() {
    let receiver = Receiver::answering("{}").await;
    let sender = sender(&HooksConfig {
        http_forward_headers: vec!["authorization".to_owned()],
        ..config(&receiver.url)
    });
    let pre_create = HookEvent::new(
        HookType::PreCreate,
        Upload {
            size: Some(432_724),
            metadata: BTreeMap::from([("filename".to_owned(), "a.png".to_owned())]),
            ..Upload::default()
        },
        client_request(),
    );
    let decision = sender.blocking(pre_create).await.expect("decision");
    assert_eq!(decision, HookDecision::proceed());

    let finished = HookEvent::new(
        HookType::PostFinish,
        Upload {
            id: "5d892c228ec8d0451dfec588697e8930".to_owned(),
            size: Some(432_724),
            offset: 432_724,
            storage: Some(Storage::s3store("bucket", "uploads/5d89")),
            ..Upload::default()
        },
        client_request(),
    );
    sender.notify(finished);
    flush(&sender).await;

    let recorded = receiver.recorded();
    assert_eq!(recorded.len(), 2);
    let request = json!({
        "Method": "POST",
        "URI": "/files/",
        "RemoteAddr": "127.0.0.1:59395",
        "Header": {
            "Authorization": ["Bearer abc"],
            "Cookie": ["session=1"],
            "Host": ["ferry.test"],
            "Tus-Resumable": ["1.0.0"]
        }
    });
    assert_eq!(
        recorded[0].body,
        json!({
            "Type": "pre-create",
            "Event": {
                "Upload": {
                    "ID": "", "Size": 432724, "SizeIsDeferred": false, "Offset": 0,
                    "MetaData": {"filename": "a.png"}, "IsPartial": false, "IsFinal": false,
                    "PartialUploads": null, "Storage": null
                },
                "HTTPRequest": request
            }
        })
    );
    assert_eq!(
        recorded[1].body["Event"]["Upload"],
        json!({
            "ID": "5d892c228ec8d0451dfec588697e8930", "Size": 432724, "SizeIsDeferred": false,
            "Offset": 432724, "MetaData": {}, "IsPartial": false, "IsFinal": false,
            "PartialUploads": null,
            "Storage": {"Type": "s3store", "Bucket": "bucket", "Key": "uploads/5d89"}
        })
    );
    assert_eq!(recorded[1].body["Type"], "post-finish");
    for hit in &recorded {
        assert_eq!(hit.headers["content-type"], "application/json");
        assert_eq!(hit.headers["authorization"], "Bearer abc");
        assert!(
            hit.headers.get("cookie").is_none(),
            "only configured headers are forwarded"
        );
    }
    assert_eq!(
        sender.stats(),
        HookStats {
            sent: 2,
            failed: 0,
            dropped: 0
        }
    );
}

#[tokio::test]
async fn a_403_rejection_reaches_the_caller_with_body_and_headers() {
    let receiver = Receiver::answering(
        r#"{"RejectUpload": true, "HTTPResponse": {"StatusCode": 403,
            "Body": "{\"message\":\"authentication failed\"}",
            "Header": {"Content-Type": "application/json", "WWW-Authenticate": "Bearer"}}}"#,
    )
    .await;
    let sender = sender(&config(&receiver.url));
    let decision = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect("decision");
    let HookDecision::Reject(reply) = decision else {
        panic!("expected a rejection, got {decision:?}");
    };
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.body, r#"{"message":"authentication failed"}"#);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!(reply.headers["www-authenticate"], "Bearer");
}

#[tokio::test]
async fn the_receiver_changes_id_metadata_and_storage_key() {
    let receiver = Receiver::start(|body| async move {
        // Keep only the file name, and derive the id from a header the client sent.
        let name = body["Event"]["Upload"]["MetaData"]["filename"].clone();
        let user = body["Event"]["HTTPRequest"]["Header"]["X-User"][0]
            .as_str()
            .unwrap_or("anonymous")
            .to_owned();
        let answer = json!({
            "ChangeFileInfo": {
                "ID": format!("{user}-0001"),
                "MetaData": {"filename": name, "owner": user},
                "Storage": {"Key": format!("users/{user}/0001")}
            }
        });
        json_answer(StatusCode::OK, &answer.to_string())
    })
    .await;
    let sender = sender(&config(&receiver.url));
    let mut headers = HeaderMap::new();
    headers.insert("x-user", HeaderValue::from_static("u42"));
    let request = HttpRequestInfo::from_parts(
        &Method::POST,
        &"/files/".parse().expect("uri"),
        None,
        &headers,
    );
    let upload = Upload {
        metadata: BTreeMap::from([
            ("filename".to_owned(), "cv.pdf".to_owned()),
            ("secret".to_owned(), "drop me".to_owned()),
        ]),
        ..Upload::default()
    };
    let decision = sender
        .blocking(HookEvent::new(HookType::PreCreate, upload, request))
        .await
        .expect("decision");
    let HookDecision::Continue { changes, response } = decision else {
        panic!("expected to continue, got {decision:?}");
    };
    assert!(response.is_empty());
    assert_eq!(changes.id.as_ref().map(|id| id.as_str()), Some("u42-0001"));
    assert_eq!(
        changes.metadata,
        Some(BTreeMap::from([
            ("filename".to_owned(), "cv.pdf".to_owned()),
            ("owner".to_owned(), "u42".to_owned()),
        ]))
    );
    assert_eq!(
        changes.storage_key.as_ref().map(|key| key.as_str()),
        Some("users/u42/0001")
    );
}

#[tokio::test]
async fn an_unsafe_id_from_the_receiver_is_an_invalid_response() {
    let receiver = Receiver::answering(r#"{"ChangeFileInfo": {"ID": "../../etc/passwd"}}"#).await;
    let sender = sender(&config(&receiver.url));
    let err = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("unsafe id");
    assert!(matches!(err, HookError::InvalidResponse { .. }), "{err:?}");
    assert_eq!(err.status_code(), StatusCode::BAD_GATEWAY);
    assert_eq!(err.to_string(), "hook receiver sent an invalid response");
    assert_eq!(sender.stats().failed, 1);
}

#[tokio::test]
async fn a_down_receiver_fails_a_blocking_hook_with_a_clear_5xx() {
    let sender = sender(&config(&closed_url().await));
    let started = Instant::now();
    let err = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("receiver is down");
    assert!(matches!(err, HookError::Unavailable { .. }), "{err:?}");
    assert_eq!(err.status_code(), StatusCode::BAD_GATEWAY);
    assert_eq!(err.to_string(), "hook receiver unavailable");
    assert!(err.detail().contains("connect failed"), "{}", err.detail());
    // Two retries after 50 ms each: it tried again, and did not wait for the 5 s timeout.
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(100) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn a_failing_receiver_is_retried_with_backoff_for_a_blocking_hook() {
    let receiver = Receiver::start(|_| async { json_answer(StatusCode::BAD_GATEWAY, "{}") }).await;
    let sender = sender(&config(&receiver.url));
    let err = sender
        .blocking(event(HookType::PreFinish, "abc"))
        .await
        .expect_err("receiver fails");
    assert!(matches!(err, HookError::Unavailable { .. }), "{err:?}");
    assert!(err.detail().contains("502 Bad Gateway"), "{}", err.detail());
    assert_eq!(receiver.hits(), 3, "one attempt and two retries");
}

#[tokio::test]
async fn a_4xx_from_the_receiver_is_not_retried() {
    let receiver = Receiver::start(|_| async { json_answer(StatusCode::NOT_FOUND, "{}") }).await;
    let sender = sender(&config(&receiver.url));
    let err = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("404");
    assert!(matches!(err, HookError::Unavailable { .. }), "{err:?}");
    assert_eq!(receiver.hits(), 1);
}

#[tokio::test]
async fn answers_that_are_not_json_or_too_large_are_invalid() {
    let html = Receiver::start(|_| async {
        (
            StatusCode::OK,
            [("content-type", "text/html")],
            "<html>ok</html>",
        )
            .into_response()
    })
    .await;
    let err = sender(&config(&html.url))
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("html");
    assert!(matches!(err, HookError::InvalidResponse { .. }), "{err:?}");
    assert!(err.detail().contains("text/html"), "{}", err.detail());
    assert_eq!(html.hits(), 1, "an invalid answer is not retried");

    let big = Receiver::start(|_| async {
        json_answer(
            StatusCode::OK,
            &json!({"HTTPResponse": {"Body": "x".repeat(6000)}}).to_string(),
        )
    })
    .await;
    let err = sender(&config(&big.url))
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("too large");
    assert!(
        err.detail().contains("larger than 5120 bytes"),
        "{}",
        err.detail()
    );
}

#[tokio::test]
async fn a_hanging_receiver_times_out_a_blocking_hook() {
    let receiver = Receiver::start(|_| async {
        std::future::pending::<()>().await;
        json_answer(StatusCode::OK, "{}")
    })
    .await;
    let sender = sender(&HooksConfig {
        timeout: Duration::from_millis(300),
        ..config(&receiver.url)
    });
    let started = Instant::now();
    let err = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect_err("timeout");
    let elapsed = started.elapsed();
    assert!(matches!(err, HookError::Timeout { .. }), "{err:?}");
    assert_eq!(err.status_code(), StatusCode::GATEWAY_TIMEOUT);
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
    assert_eq!(receiver.hits(), 1, "no retry starts past the deadline");
}

#[tokio::test]
async fn notifications_retry_in_the_background_then_give_up() {
    let receiver =
        Receiver::start(|_| async { json_answer(StatusCode::SERVICE_UNAVAILABLE, "{}") }).await;
    let sender = sender(&config(&receiver.url));
    sender.notify(event(HookType::PostFinish, "abc"));
    // Delivery takes three attempts at least 50 ms apart; notify returning before the third
    // shows it did not wait (no bound on the wall clock, which a loaded machine stretches).
    assert!(
        receiver.recorded().len() < 3,
        "notify must not wait for delivery"
    );
    flush(&sender).await;
    let recorded = receiver.recorded();
    assert_eq!(
        recorded.len(),
        3,
        "one attempt and two retries, then it gives up"
    );
    for pair in recorded.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap >= Duration::from_millis(50),
            "backoff respected: {gap:?}"
        );
    }
    assert_eq!(
        sender.stats(),
        HookStats {
            sent: 0,
            failed: 1,
            dropped: 0
        }
    );
}

#[tokio::test]
async fn notifications_to_a_down_receiver_never_block_the_caller() {
    let sender = sender(&config(&closed_url().await));
    for id in ["a", "b", "c"] {
        sender.notify(event(HookType::PostCreate, id));
    }
    // Each failure is counted only after two retries 50 ms apart: none counted yet means the
    // caller did not wait for any delivery.
    assert_eq!(sender.stats().failed, 0, "notify waited for delivery");
    flush(&sender).await;
    assert_eq!(sender.stats().failed, 3);
}

#[tokio::test]
async fn a_full_queue_drops_new_notifications_and_counts_them() {
    let gate = Arc::new(Semaphore::new(0));
    let receiver = Receiver::start({
        let gate = gate.clone();
        move |_| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.expect("gate").forget();
                json_answer(StatusCode::OK, "{}")
            }
        }
    })
    .await;
    let sender = sender(&HooksConfig {
        queue_capacity: 1,
        max_in_flight: 1,
        ..config(&receiver.url)
    });
    sender.notify(event(HookType::PostFinish, "first"));
    receiver.wait_for_hits(1).await; // in flight, held by the gate
    sender.notify(event(HookType::PostFinish, "second")); // waits in the queue
    sender.notify(event(HookType::PostFinish, "third")); // the queue is full
    assert_eq!(sender.stats().dropped, 1);
    gate.add_permits(10);
    flush(&sender).await;
    let ids: Vec<_> = receiver
        .recorded()
        .iter()
        .map(|hit| hit.body["Event"]["Upload"]["ID"].clone())
        .collect();
    assert_eq!(ids, [json!("first"), json!("second")]);
    assert_eq!(
        sender.stats(),
        HookStats {
            sent: 2,
            failed: 0,
            dropped: 1
        }
    );
}

#[tokio::test]
async fn post_receive_can_stop_the_upload() {
    let receiver = Receiver::answering(
        r#"{"StopUpload": true, "HTTPResponse": {"StatusCode": 410,
            "Body": "{\"message\":\"project deleted\"}"}}"#,
    )
    .await;
    let sender = sender(&config(&receiver.url));
    let stop = StopSignal::new();
    let mut progress = event(HookType::PostReceive, "abc");
    progress.event.upload.offset = 4;
    sender.notify_progress(progress, &stop);
    let reply = tokio::time::timeout(Duration::from_secs(10), stop.stopped())
        .await
        .expect("stopped in time");
    assert_eq!(reply.status, StatusCode::GONE);
    assert_eq!(reply.body, r#"{"message":"project deleted"}"#);
    assert_eq!(receiver.recorded()[0].body["Event"]["Upload"]["Offset"], 4);
}

#[tokio::test]
async fn disabled_events_are_never_sent() {
    let receiver = Receiver::answering(r#"{"RejectUpload": true}"#).await;
    let sender = sender(&HooksConfig {
        enabled_events: EnabledEvents::parse("post-finish").expect("events"),
        ..config(&receiver.url)
    });
    assert!(!sender.enabled(HookType::PreCreate));
    let decision = sender
        .blocking(event(HookType::PreCreate, ""))
        .await
        .expect("decision");
    assert_eq!(decision, HookDecision::proceed());
    sender.notify(event(HookType::PostCreate, "abc"));
    sender.notify(event(HookType::PostFinish, "abc"));
    flush(&sender).await;
    let types: Vec<_> = receiver
        .recorded()
        .iter()
        .map(|hit| hit.body["Type"].clone())
        .collect();
    assert_eq!(types, [json!("post-finish")]);
}

#[tokio::test]
async fn the_default_config_uses_tusds_values_and_rejects_two_senders() {
    let defaults = HooksConfig::default();
    assert_eq!(defaults.http_retry, 3);
    assert_eq!(defaults.http_backoff, Duration::from_secs(1));
    assert_eq!(defaults.timeout, Duration::from_secs(15));
    assert_eq!(defaults.response_size_limit, 5 * 1024);
    assert_eq!(defaults.progress_interval, Duration::from_millis(1000));
    assert_eq!(defaults.enabled_events, EnabledEvents::tusd_default());
    assert!(HookSender::from_config(&defaults).expect("ok").is_none());
    let both = HooksConfig {
        http: Some("http://127.0.0.1:1/".to_owned()),
        dir: Some(std::env::temp_dir()),
        ..HooksConfig::default()
    };
    let err = HookSender::from_config(&both).expect_err("both");
    assert_eq!(
        err.to_string(),
        "invalid hook configuration: --hooks-http and --hooks-dir cannot be used together"
    );
    let sender = sender(&HooksConfig {
        progress_interval: Duration::from_millis(250),
        ..config("http://127.0.0.1:1/")
    });
    assert_eq!(sender.progress_interval(), Duration::from_millis(250));
}
