//! The companion's routes without providers or S3 configured: link imports that aim at private
//! space or other schemes (the full address table is `ferry-companion/tests/ssrf.rs`), bodies
//! that are not what the route reads, and routes that must not exist when their feature is off.

use crate::probe::{http, run_table, start};

#[tokio::test]
async fn companion_routes_refuse_what_they_must() {
    let server = start(&[]).await;
    let meta = |name: &str, url: &str| {
        http(name, "POST", "/url/meta")
            .header("Content-Type", "application/json")
            .body(serde_json::json!({ "url": url }).to_string())
    };
    run_table(
        &server,
        vec![
            meta("loopback", "http://127.0.0.1:1/").expect(400, ""),
            meta(
                "metadata service",
                "http://169.254.169.254/latest/meta-data/",
            )
            .expect(400, ""),
            meta("decimal loopback", "http://2130706433/").expect(400, ""),
            meta("file scheme", "file:///etc/passwd").expect(400, ""),
            meta("gopher scheme", "gopher://127.0.0.1:70/").expect(400, ""),
            meta("not a URL", "not a url").expect(400, ""),
            http("meta: not JSON", "POST", "/url/meta")
                .header("Content-Type", "application/json")
                .body(b"{".to_vec())
                .expect(400, ""),
            http("get: no URL", "POST", "/url/get")
                .header("Content-Type", "application/json")
                .body(b"{}".to_vec())
                .expect(400, ""),
            http("progress socket of no transfer", "GET", "/api/not-a-token").expect(400, ""),
            http(
                "provider routes without providers",
                "GET",
                "/drive/list/root",
            )
            .expect(404, ""),
            http(
                "S3 routes without S3",
                "GET",
                "/s3/params?filename=a&type=b",
            )
            .expect(404, "S3 is not configured"),
        ],
    )
    .await;
}
