//! POST: creation, creation-with-upload, creation-defer-length, concatenation, limits.

use ferry_tus::TusConfig;

use crate::common::{Case, Endpoint, OCTETS, V, run_table};

#[tokio::test]
async fn creation_table() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(100),
        ..TusConfig::default()
    })
    .await;
    let cases = [
        Case {
            name: "length",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "10")],
            body: b"",
            status: 201,
            expect: &[("tus-resumable", Some("1.0.0")), ("upload-offset", None)],
        },
        Case {
            name: "bare collection path",
            method: "POST",
            path: "/files",
            headers: &[V, ("Upload-Length", "10")],
            body: b"",
            status: 201,
            expect: &[],
        },
        Case {
            name: "deferred",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Defer-Length", "1")],
            body: b"",
            status: 201,
            expect: &[],
        },
        Case {
            name: "no version",
            method: "POST",
            path: "/files/",
            headers: &[("Upload-Length", "10")],
            body: b"",
            status: 412,
            expect: &[("tus-version", Some("1.0.0"))],
        },
        Case {
            name: "wrong version",
            method: "POST",
            path: "/files/",
            headers: &[("Tus-Resumable", "0.2.2"), ("Upload-Length", "10")],
            body: b"",
            status: 412,
            expect: &[("tus-version", Some("1.0.0"))],
        },
        Case {
            name: "neither length nor defer",
            method: "POST",
            path: "/files/",
            headers: &[V],
            body: b"",
            status: 400,
            expect: &[("location", None)],
        },
        Case {
            name: "both length and defer",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "10"), ("Upload-Defer-Length", "1")],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "defer other than 1",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Defer-Length", "2")],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "negative length",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "-1")],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "over max size",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "101")],
            body: b"",
            status: 413,
            expect: &[("location", None)],
        },
        Case {
            name: "duplicate metadata key",
            method: "POST",
            path: "/files/",
            headers: &[
                V,
                ("Upload-Length", "1"),
                ("Upload-Metadata", "a aGk=,a aGk="),
            ],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "metadata not base64",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "1"), ("Upload-Metadata", "a %%%")],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "with upload",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "5"), OCTETS],
            body: b"hello",
            status: 201,
            expect: &[("upload-offset", Some("5"))],
        },
        Case {
            name: "with upload longer than length",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "2"), OCTETS],
            body: b"hello",
            status: 413,
            expect: &[("location", None)],
        },
        Case {
            name: "partial",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Length", "5"), ("Upload-Concat", "partial")],
            body: b"",
            status: 201,
            expect: &[],
        },
        Case {
            name: "final naming a foreign url",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Concat", "final;/etc/passwd")],
            body: b"",
            status: 400,
            expect: &[],
        },
        Case {
            name: "final naming a non-partial upload",
            method: "POST",
            path: "/files/",
            headers: &[V, ("Upload-Concat", "final;/files/{id}")],
            body: b"",
            status: 400,
            expect: &[],
        },
    ];
    run_table(&ep, Some(10), b"", &cases).await;
}

#[tokio::test]
async fn metadata_is_capped_and_rendered_canonically() {
    let ep = Endpoint::start().await;
    let huge = format!("k {}", "QUFB".repeat(2000));
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Length", "1"), ("Upload-Metadata", &huge)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.text(), "Upload-Metadata is too large\n");
    // HEAD answers with our canonical rendering, not the client's text.
    let upload = ep.create(Some(1), &[("Upload-Metadata", "b,a aGk=")]).await;
    let res = ep.send("HEAD", &upload, &[V], Vec::new()).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("upload-metadata"), Some("a aGk=,b"));
}

#[tokio::test]
async fn parallel_partials_concatenate_into_a_final_upload() {
    let ep = Endpoint::start().await;
    let parts = [
        ferry_testkit::random_bytes(70_001),
        ferry_testkit::random_bytes(3),
    ];
    let mut urls = Vec::new();
    for part in &parts {
        let url = ep
            .create(Some(part.len() as u64), &[("Upload-Concat", "partial")])
            .await;
        assert_eq!(ep.patch(&url, 0, part).await.status, 204);
        urls.push(url);
    }
    let absolute = ep.url(&urls[1]);
    let concat = format!("final;{} {absolute}", urls[0]);
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    let head = ep.send("HEAD", &final_url, &[V], Vec::new()).await;
    let total = (parts[0].len() + parts[1].len()).to_string();
    assert_eq!(head.header("upload-length"), Some(total.as_str()));
    assert_eq!(head.header("upload-offset"), Some(total.as_str()));
    assert_eq!(
        head.header("upload-concat"),
        Some(format!("final;{} {}", urls[0], urls[1]).as_str())
    );
    let whole = parts.concat();
    assert_eq!(
        ferry_testkit::sha256_hex(&ep.stored(&final_url)),
        ferry_testkit::sha256_hex(&whole)
    );
    // A final upload is read-only.
    let res = ep.patch(&final_url, whole.len() as u64, b"x").await;
    assert_eq!(res.status, 403);
    // A final upload with Upload-Length is refused.
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat), ("Upload-Length", "5")],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 400);
}
