//! Transfers end to end: a real origin, the companion, real tus and form destinations; bytes
//! compared by sha256 at the destination.

mod common;

use common::*;
use ferry_testkit::origin::{Origin, OriginOptions, fail_first};
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::json;

async fn tus_transfer(
    data: &[u8],
    opts: OriginOptions,
    wrap_dest: bool,
) -> (serde_json::Value, Vec<serde_json::Value>, Vec<u8>) {
    let origin = Origin::start(data.to_vec(), opts).await;
    let tus = if wrap_dest {
        TusDest::start_with(|r| fail_first(r, axum::http::Method::PATCH, 2)).await
    } else {
        TusDest::start().await
    };
    let mut cfg = config(&[tus.origin()]);
    cfg.tus_chunk_size = 256 * 1024;
    let companion = companion(cfg, no_names()).await;
    let token = start_transfer(
        &companion,
        json!({
            "fileId": "f1", "url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint(),
            "size": data.len(), "metadata": {"name": "a.bin", "type": "application/octet-stream"},
            "headers": {"X-Extra": "1", "Cookie": "secret=1"}
        }),
    )
    .await;
    let mut ws = socket(&companion, &token).await;
    let (last, progress) = finish(&mut ws).await;
    let stored = if last["action"] == "success" {
        download(last["payload"]["url"].as_str().expect("url")).await
    } else {
        Vec::new()
    };
    (last, progress, stored)
}

#[tokio::test]
async fn tus_known_size_is_byte_exact_with_progress_frames() {
    let data = random_bytes(1_500_000);
    let (last, progress, stored) = tus_transfer(&data, OriginOptions::default(), false).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(last["payload"]["complete"], true);
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    // Frames are the latest state, throttled: intermediate ones may be skipped, but each one
    // seen has the wire shape and they never go backwards.
    let mut last_bytes = 0;
    for f in &progress {
        let p = &f["payload"];
        let bytes = p["bytesUploaded"].as_u64().expect("bytesUploaded");
        assert!(bytes >= last_bytes && bytes <= 1_500_000, "{f}");
        last_bytes = bytes;
        assert_eq!(p["bytesTotal"], 1_500_000);
        let pct = format!("{:.2}", bytes as f64 * 100.0 / 1_500_000.0);
        assert_eq!(p["progress"], pct.as_str());
    }
}

#[tokio::test]
async fn tus_unknown_size_uses_deferred_length() {
    let data = random_bytes(700_000);
    let opts = OriginOptions {
        content_length: false,
        ..OriginOptions::default()
    };
    let (last, _, stored) = tus_transfer(&data, opts, false).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

#[tokio::test]
async fn tus_destination_failing_then_recovering_completes() {
    let data = random_bytes(600_000);
    let (last, _, stored) = tus_transfer(&data, OriginOptions::default(), true).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

#[tokio::test]
async fn a_source_lying_about_its_length_fails() {
    let data = random_bytes(300_000);
    let opts = OriginOptions {
        lie_length: Some(400_000),
        ..OriginOptions::default()
    };
    let (last, _, _) = tus_transfer(&data, opts, false).await;
    assert_eq!(
        last,
        json!({"action": "error", "payload": {"error": {"message": "Upload error"}}})
    );
}

// On a paused clock: the runtime jumps to the watchdog's next tick whenever every task waits,
// so the one-second stall passes at once and loopback I/O still completes in between.
#[tokio::test(start_paused = true)]
async fn a_stalling_source_aborts_with_the_stall_message() {
    let origin = Origin::start(
        random_bytes(300_000),
        OriginOptions {
            stall_after: Some(100_000),
            ..OriginOptions::default()
        },
    )
    .await;
    let tus = TusDest::start().await;
    let mut cfg = config(&[tus.origin()]);
    cfg.stall_timeout = std::time::Duration::from_secs(1);
    let companion = companion(cfg, no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    let mut ws = socket(&companion, &token).await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(
        last["payload"]["error"]["message"],
        "Upload stalled for 1 seconds, aborting."
    );
}

async fn multipart(
    data: &[u8],
    opts: OriginOptions,
    extra: serde_json::Value,
) -> (serde_json::Value, Vec<u8>) {
    let origin = Origin::start(data.to_vec(), opts).await;
    let form = FormDest::start().await;
    let companion = companion(config(&[form.server.url("")]), no_names()).await;
    let mut body = json!({"url": origin.file_url(), "protocol": "multipart", "size": data.len(),
        "metadata": {"name": "pic.png", "type": "image/png", "caption": "hi"}});
    let endpoint_path = extra["path"].as_str().unwrap_or("/upload").to_owned();
    body["endpoint"] = json!(form.server.url(&endpoint_path));
    for (k, v) in extra.as_object().expect("object") {
        if k != "path" {
            body[k] = v.clone();
        }
    }
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    let (last, _) = finish(&mut ws).await;
    let stored = match last["payload"]["url"].as_str() {
        Some(url) if last["action"] == "success" => download(&form.server.url(url)).await,
        _ => Vec::new(),
    };
    (last, stored)
}

#[tokio::test]
async fn multipart_form_post_is_byte_exact_and_reports_the_answer() {
    let data = random_bytes(900_000);
    let (last, stored) = multipart(&data, OriginOptions::default(), json!({})).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    let text = last["payload"]["response"]["responseText"]
        .as_str()
        .expect("response text");
    let answer: serde_json::Value = serde_json::from_str(text).expect("json answer");
    assert_eq!(answer["name"], "pic.png");
    assert_eq!(answer["url"], last["payload"]["url"]);
    assert_eq!(last["payload"]["response"]["status"], 200);
}

#[tokio::test]
async fn multipart_unknown_size_streams_chunked() {
    let data = random_bytes(400_000);
    let opts = OriginOptions {
        content_length: false,
        ..OriginOptions::default()
    };
    let (last, stored) = multipart(&data, opts, json!({})).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

#[tokio::test]
async fn multipart_raw_put_is_byte_exact() {
    let data = random_bytes(500_000);
    let extra =
        json!({"useFormData": false, "httpMethod": "PUT", "path": "/upload/raw?name=raw.bin"});
    let (last, stored) = multipart(&data, OriginOptions::default(), extra).await;
    assert_eq!(last["action"], "success", "{last}");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

#[tokio::test]
async fn url_get_validates_the_body() {
    let tus = TusDest::start().await;
    let companion = companion(config(&[tus.endpoint()]), no_names()).await;
    let src = "http://127.0.0.1:1/x";
    let cases = [
        (
            json!({"url": src, "protocol": "tus", "endpoint": "http://127.0.0.1:9/files/"}),
            "upload destination does not match any allowed destinations",
        ),
        (
            json!({"url": src, "protocol": "tus", "endpoint": format!("{}x/../../other", tus.endpoint())}),
            "upload destination does not match any allowed destinations",
        ),
        (
            json!({"url": src, "protocol": "tus"}),
            "no destination specified",
        ),
        (
            json!({"url": src, "protocol": "carrier-pigeon", "endpoint": tus.endpoint()}),
            "unsupported protocol specified",
        ),
        (
            json!({"url": src, "protocol": "multipart", "endpoint": tus.endpoint(), "httpMethod": "DELETE"}),
            "unsupported HTTP METHOD specified",
        ),
        (
            json!({"protocol": "tus", "endpoint": tus.endpoint()}),
            "Invalid request body",
        ),
        (
            json!({"url": "file:///etc/passwd", "protocol": "tus", "endpoint": tus.endpoint()}),
            "only http and https URLs are allowed",
        ),
    ];
    for (body, message) in cases {
        let (status, answer) = post_json(&companion, "/url/get", body.clone()).await;
        assert_eq!(
            (status, answer),
            (400, json!({"message": message})),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_source_larger_than_the_cap_fails_even_without_a_length() {
    let origin = Origin::start(
        random_bytes(300_000),
        OriginOptions {
            content_length: false,
            ..OriginOptions::default()
        },
    )
    .await;
    let tus = TusDest::start().await;
    let mut cfg = config(&[tus.origin()]);
    cfg.max_file_size = Some(100_000);
    let companion = companion(cfg, no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint()}),
    )
    .await;
    let mut ws = socket(&companion, &token).await;
    let (last, progress) = finish(&mut ws).await;
    assert_eq!(
        last["payload"]["error"]["message"],
        "File size exceeds limit"
    );
    assert!(
        progress
            .iter()
            .all(|f| f["payload"]["bytesUploaded"].as_u64() <= Some(100_000))
    );
}
