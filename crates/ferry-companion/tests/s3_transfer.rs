//! `s3-multipart` transfers into a real Garage bucket: known and unknown size (several parts,
//! some in parallel), pause/resume, cancel aborting the upload; bytes compared by sha256.

mod common;

use std::time::Duration;

use common::*;
use ferry_companion::CompanionConfig;
use ferry_testkit::garage::Garage;
use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::{TestServer, random_bytes, sha256_hex};
use serde_json::{Value, json};

const MIB: usize = 1024 * 1024;

async fn setup() -> (Garage, TestServer) {
    let garage = Garage::start().await;
    let config = CompanionConfig {
        s3: Some(common::s3::state(&garage, "imports/")),
        ..config(&[])
    };
    let server = companion(config, no_names()).await;
    (garage, server)
}

fn key_of(success: &Value) -> String {
    let text = success["payload"]["response"]["responseText"]
        .as_str()
        .expect("responseText");
    let answer: Value = serde_json::from_str(text).expect("json");
    answer["key"].as_str().expect("key").to_owned()
}

#[tokio::test]
async fn s3_multipart_known_and_unknown_size_are_byte_exact() {
    let (garage, companion) = setup().await;
    for content_length in [true, false] {
        let data = random_bytes(12 * MIB + 3);
        let opts = OriginOptions {
            content_length,
            chunk: 256 * 1024,
            ..OriginOptions::default()
        };
        let origin = Origin::start(data.clone(), opts).await;
        let body = json!({"url": origin.file_url(), "protocol": "s3-multipart", "size": data.len(),
            "metadata": {"name": "big file.bin", "type": "application/octet-stream"}});
        let token = start_transfer(&companion, body).await;
        let mut ws = socket(&companion, &token).await;
        let (last, _) = finish(&mut ws).await;
        assert_eq!(last["action"], "success", "{last}");
        let key = key_of(&last);
        assert!(
            key.starts_with("imports/") && key.ends_with("-big_file.bin"),
            "{key}"
        );
        let stored = garage.get_object(&key).await.expect("object");
        assert_eq!(
            sha256_hex(&stored),
            sha256_hex(&data),
            "content_length {content_length}"
        );
    }
}

#[tokio::test]
async fn s3_multipart_pause_resume_and_cancel() {
    let (garage, companion) = setup().await;
    let data = random_bytes(11 * MIB);
    let gate = (6 * MIB) as u64;
    let origin = Origin::start(
        data.clone(),
        OriginOptions {
            gate_after: Some(gate),
            ..OriginOptions::default()
        },
    )
    .await;
    let token = start_transfer(&companion, json!({"url": origin.file_url(), "protocol": "s3-multipart", "metadata": {"name": "p.bin"}})).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, gate).await;
    send_action(&mut ws, "pause").await;
    send_action(&mut ws, "resume").await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let stored = garage.get_object(&key_of(&last)).await.expect("object");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    assert_eq!(origin.gets(), 2);
    // The first 5 MiB part was kept: the source was re-read from there.
    assert_eq!(origin.ranges(), vec![format!("bytes={}-", 5 * MIB)]);

    let origin = Origin::start(
        random_bytes(11 * MIB),
        OriginOptions {
            gate_after: Some(gate),
            ..OriginOptions::default()
        },
    )
    .await;
    let token = start_transfer(&companion, json!({"url": origin.file_url(), "protocol": "s3-multipart", "metadata": {"name": "c.bin"}})).await;
    let mut ws = socket(&companion, &token).await;
    progress_at_least(&mut ws, gate).await;
    send_action(&mut ws, "cancel").await;
    let mut listing = String::new();
    for _ in 0..100 {
        listing = garage.list_multipart_uploads().await;
        if !listing.contains("<Upload>") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !listing.contains("<Upload>"),
        "upload not aborted: {listing}"
    );
}

#[tokio::test]
async fn s3_multipart_without_a_bucket_is_refused() {
    let companion = companion(config(&[]), no_names()).await;
    let (status, body) = post_json(
        &companion,
        "/url/get",
        json!({"url": "http://127.0.0.1:1/x", "protocol": "s3-multipart"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"message": "s3-multipart transfers are not available on this server"})
        )
    );
}
