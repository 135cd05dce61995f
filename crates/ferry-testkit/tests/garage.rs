//! The Garage helper starts a real node that stores and returns objects, and answers CORS
//! preflights the way the helper configured them.

use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};

#[tokio::test]
async fn garage_stores_and_returns_an_object() {
    let garage = Garage::start().await;
    let bytes = random_bytes(300_000);
    garage.put_object("dir/hello.bin", bytes.clone()).await;
    let back = garage
        .get_object("dir/hello.bin")
        .await
        .expect("object exists");
    assert_eq!(sha256_hex(&back), sha256_hex(&bytes));
    assert_eq!(garage.get_object("missing").await, None);
}

#[tokio::test]
async fn garage_cors_exposes_etag_to_the_allowed_origin() {
    let garage = Garage::start().await;
    garage.set_cors(&["http://127.0.0.1:9999"], &["ETag"]).await;
    let url = format!("{}/{}/x", garage.endpoint, garage.bucket);
    let resp = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "http://127.0.0.1:9999")
        .header("access-control-request-method", "PUT")
        .send()
        .await
        .expect("preflight");
    assert!(resp.status().is_success(), "preflight: {}", resp.status());
    let allow = resp
        .headers()
        .get("access-control-allow-origin")
        .expect("allow-origin");
    assert_eq!(allow, "http://127.0.0.1:9999");
    let expose = resp
        .headers()
        .get("access-control-expose-headers")
        .expect("expose-headers")
        .to_str()
        .expect("ascii");
    assert!(expose.to_ascii_lowercase().contains("etag"), "{expose}");
}
