//! The Assembly API's caps in the binary, from its flags: `--assembly-max-per-client` refuses a
//! client's Assemblies past the window with RATE_LIMIT_REACHED, and `--assembly-max-disk`
//! refuses a tus upload into an Assembly that would not fit before a byte is stored, while
//! uploads that name no Assembly are not touched.

mod common;

use base64::Engine;
use serde_json::Value;

/// POSTs an Assembly form (key only: no secret is set) expecting one upload.
async fn create_assembly(base: &str) -> (u16, Option<String>, Value) {
    let params = serde_json::json!({"auth": {"key": "caps-key"}, "steps": {"f": {"robot": "/file/filter", "use": ":original"}}});
    common::post_assembly(base, &params, Some(1), None).await
}

#[tokio::test]
async fn the_assembly_caps_come_from_the_flags() {
    let server = common::serve(&[
        "--assembly-key",
        "caps-key",
        "--assembly-max-per-client",
        "2",
        "--assembly-rate-window",
        "600",
        "--assembly-max-disk",
        "50000",
    ])
    .await;
    let mut assembly_url = String::new();
    for _ in 0..2 {
        let (code, _, body) = create_assembly(&server.base).await;
        assert_eq!(
            (code, body["ok"].as_str()),
            (200, Some("ASSEMBLY_UPLOADING")),
            "{body}"
        );
        assembly_url = body["assembly_ssl_url"].as_str().expect("url").to_owned();
    }
    let (code, retry, body) = create_assembly(&server.base).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("RATE_LIMIT_REACHED")),
        "{body}"
    );
    let wait = body["info"]["retryIn"].as_u64().expect("retryIn");
    assert!((590..=600).contains(&wait), "{body}");
    assert_eq!(retry, Some(wait.to_string()));

    // A tus upload into the Assembly larger than the disk cap is refused at creation.
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let meta = format!(
        "assembly_url {},filename {}",
        b64(&assembly_url),
        b64("big.bin")
    );
    let client = reqwest::Client::new();
    let res = client
        .post(format!("{}/files/", server.base))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "60000")
        .header("Upload-Metadata", &meta)
        .send()
        .await
        .expect("create");
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"], "MAX_SIZE_EXCEEDED", "{body}");
    assert_eq!(
        body["message"],
        "The server's storage for Assemblies is full (50000 bytes); this file does not fit."
    );
    // One that fits, and one for no Assembly, are created as before.
    common::create_with(&client, &server.base, 1000, &[("Upload-Metadata", &meta)]).await;
    common::create(&client, &server.base, 60000).await;
}
