//! OPTIONS: capabilities, ignoring `Tus-Resumable`; CORS preflight for other origins.

use ferry_tus::TusConfig;

use crate::common::{Case, Endpoint, run_table};

const EXTENSIONS: &str = "creation,creation-with-upload,creation-defer-length,termination,checksum,checksum-trailer,concatenation,concatenation-unfinished,expiration";

#[tokio::test]
async fn options_table() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(1_000_000),
        ..TusConfig::default()
    })
    .await;
    let cases = [
        Case {
            name: "collection",
            method: "OPTIONS",
            path: "/files/",
            headers: &[],
            body: b"",
            status: 204,
            expect: &[
                ("tus-version", Some("1.0.0")),
                ("tus-extension", Some(EXTENSIONS)),
                ("tus-max-size", Some("1000000")),
                ("tus-checksum-algorithm", Some("sha1,md5,sha256,crc32")),
            ],
        },
        Case {
            name: "other version is ignored on OPTIONS",
            method: "OPTIONS",
            path: "/files/",
            headers: &[("Tus-Resumable", "0.2.2")],
            body: b"",
            status: 204,
            expect: &[("tus-version", Some("1.0.0"))],
        },
        Case {
            name: "CORS preflight from another origin",
            method: "OPTIONS",
            path: "/files/{id}",
            headers: &[
                ("Origin", "https://app.example"),
                ("Access-Control-Request-Method", "PATCH"),
                (
                    "Access-Control-Request-Headers",
                    "tus-resumable,upload-offset,content-type",
                ),
            ],
            body: b"",
            status: 204,
            expect: &[
                ("access-control-allow-origin", Some("*")),
                ("tus-version", None),
            ],
        },
        Case {
            name: "CORS preflight allows the X-Request-ID Uppy's Transloadit plugin sends",
            method: "OPTIONS",
            path: "/files/",
            headers: &[
                ("Origin", "https://app.example"),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "x-request-id,upload-metadata",
                ),
            ],
            body: b"",
            status: 204,
            expect: &[(
                "access-control-allow-headers",
                Some(
                    "content-type, tus-resumable, upload-length, upload-offset, \
                     upload-metadata, upload-defer-length, upload-concat, upload-checksum, \
                     x-http-method-override, x-requested-with, upload-complete, \
                     upload-draft-interop-version, x-request-id",
                ),
            )],
        },
    ];
    run_table(&ep, Some(10), b"", &cases).await;
}

#[tokio::test]
async fn cors_exposes_tus_headers_to_other_origins() {
    let ep = Endpoint::start().await;
    let res = ep
        .send(
            "POST",
            "/files/",
            &[
                ("Tus-Resumable", "1.0.0"),
                ("Upload-Length", "3"),
                ("Origin", "https://app.example"),
            ],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    let exposed = res
        .header("access-control-expose-headers")
        .expect("exposed headers")
        .to_ascii_lowercase();
    for name in [
        "location",
        "upload-offset",
        "upload-length",
        "upload-metadata",
        "upload-expires",
        "tus-resumable",
        "tus-version",
        "tus-extension",
        "tus-max-size",
    ] {
        assert!(exposed.contains(name), "{name} not exposed in {exposed}");
    }
}
