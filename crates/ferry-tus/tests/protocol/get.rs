//! GET: finished uploads download; only allowlisted types are served as themselves.

use ferry_testkit::{random_bytes, sha256_hex};

use crate::common::{Endpoint, V};

#[tokio::test]
async fn downloads_with_safe_types_only() {
    let ep = Endpoint::start().await;
    let bytes = random_bytes(100_000);
    // (filetype metadata, expected Content-Type, attachment?)
    let cases = [
        ("image/png", "image/png", false),
        ("application/pdf; x=1", "application/pdf", false),
        ("text/plain", "text/plain", false),
        ("image/svg+xml", "application/octet-stream", true),
        ("text/html", "application/octet-stream", true),
        ("text/html\r\nX-Evil: 1", "application/octet-stream", true),
        ("", "application/octet-stream", true),
    ];
    for (kind, content_type, attachment) in cases {
        let meta = format!("filetype {}", base64_of(kind));
        let upload = ep
            .create(Some(bytes.len() as u64), &[("Upload-Metadata", &meta)])
            .await;
        let res = ep.send("GET", &upload, &[], Vec::new()).await;
        assert_eq!(res.status, 404, "{kind}: unfinished uploads are not served");
        assert_eq!(ep.patch(&upload, 0, &bytes).await.status, 204);
        let res = ep.send("GET", &upload, &[], Vec::new()).await;
        assert_eq!(res.status, 200, "{kind}");
        assert_eq!(res.header("content-type"), Some(content_type), "{kind}");
        assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(
            res.header("content-disposition"),
            attachment.then_some("attachment"),
            "{kind}"
        );
        assert_eq!(res.header("x-evil"), None);
        assert_eq!(sha256_hex(&res.body), sha256_hex(&bytes));
    }
    let res = ep.send("GET", "/files/not-an-id", &[V], Vec::new()).await;
    assert_eq!(res.status, 404);
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}
