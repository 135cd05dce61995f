//! The IETF "Resumable Uploads for HTTP" draft (interop version 8) behind `ietf_draft`:
//! creation, offset retrieval, appends, problem documents, and tus handling when the flag is off.

use ferry_testkit::sha256_hex;
use ferry_tus::TusConfig;

use crate::common::{Endpoint, Response};

const DRAFT: (&str, &str) = ("Upload-Draft-Interop-Version", "8");
const PARTIAL: (&str, &str) = ("Content-Type", "application/partial-upload");
const INCOMPLETE: (&str, &str) = ("Upload-Complete", "?0");
const COMPLETE: (&str, &str) = ("Upload-Complete", "?1");
const PROBLEMS: &str = "https://iana.org/assignments/http-problem-types#";

async fn draft_endpoint() -> Endpoint {
    Endpoint::with(TusConfig {
        ietf_draft: true,
        max_size: Some(1000),
        ..TusConfig::default()
    })
    .await
}

fn assert_headers(res: &Response, what: &str, want: &[(&str, Option<&str>)]) {
    for (name, value) in want {
        assert_eq!(res.header(name), *value, "{what}: header {name}");
    }
}

/// The problem document of an error answer: its content type and JSON body.
fn problem(res: &Response, what: &str) -> serde_json::Value {
    assert_eq!(
        res.header("content-type"),
        Some("application/problem+json"),
        "{what}"
    );
    serde_json::from_slice(&res.body).unwrap_or_else(|e| panic!("{what}: {e}: {}", res.text()))
}

async fn create(ep: &Endpoint, headers: &[(&str, &str)], body: &[u8]) -> (Response, String) {
    let res = ep.send("POST", "/files/", headers, body.to_vec()).await;
    assert_eq!(res.status, 201, "create: {}", res.text());
    let location = res.header("location").expect("Location").to_owned();
    (res, location)
}

async fn append(ep: &Endpoint, path: &str, offset: u64, complete: bool, body: &[u8]) -> Response {
    let offset = offset.to_string();
    let done = if complete { COMPLETE } else { INCOMPLETE };
    ep.send(
        "PATCH",
        path,
        &[DRAFT, PARTIAL, done, ("Upload-Offset", &offset)],
        body.to_vec(),
    )
    .await
}

#[tokio::test]
async fn create_append_head_download() {
    let ep = draft_endpoint().await;
    let (res, upload) = create(&ep, &[DRAFT, INCOMPLETE], b"").await;
    assert_headers(
        &res,
        "create ?0",
        &[
            ("upload-offset", Some("0")),
            ("upload-complete", Some("?0")),
            ("upload-limit", Some("max-size=1000")),
            ("upload-draft-interop-version", Some("8")),
            ("tus-resumable", None),
        ],
    );
    let head = ep.send("HEAD", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(head.status, 204);
    assert_headers(
        &head,
        "head after create",
        &[
            ("upload-offset", Some("0")),
            ("upload-complete", Some("?0")),
            ("upload-length", None),
            ("cache-control", Some("no-store")),
            ("upload-limit", Some("max-size=1000")),
        ],
    );

    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
    let (first, second) = data.split_at(120);
    // (offset, complete, body, status, Upload-Offset, Upload-Complete)
    type Step<'a> = (u64, bool, &'a [u8], u16, &'a str, &'a str);
    let steps: &[Step] = &[
        (0, false, first, 204, "120", "?0"),
        (120, true, second, 204, "300", "?1"),
    ];
    for (offset, complete, body, status, want_offset, want_complete) in steps {
        let res = append(&ep, &upload, *offset, *complete, body).await;
        assert_eq!(res.status, *status, "append at {offset}: {}", res.text());
        assert_headers(
            &res,
            "append",
            &[
                ("upload-offset", Some(want_offset)),
                ("upload-complete", Some(want_complete)),
            ],
        );
    }
    let head = ep.send("HEAD", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(head.status, 204);
    assert_headers(
        &head,
        "head after completion",
        &[
            ("upload-offset", Some("300")),
            ("upload-complete", Some("?1")),
            ("upload-length", Some("300")),
        ],
    );
    let got = ep.send("GET", &upload, &[], Vec::new()).await;
    assert_eq!(got.status, 200);
    assert_eq!(sha256_hex(&got.body), sha256_hex(&data));
    assert_eq!(got.body.len(), data.len());
}

#[tokio::test]
async fn append_errors() {
    let ep = draft_endpoint().await;
    let (_, upload) = create(&ep, &[DRAFT, INCOMPLETE, ("Upload-Length", "6")], b"abc").await;

    // Wrong offset: 409 with the mismatching-upload-offset problem, nothing stored.
    let res = append(&ep, &upload, 1, false, b"d").await;
    assert_eq!(res.status, 409, "{}", res.text());
    let doc = problem(&res, "wrong offset");
    assert_eq!(
        doc["type"],
        format!("{PROBLEMS}mismatching-upload-offset").as_str()
    );
    assert!(doc["title"].is_string());
    assert_eq!(doc["expected-offset"], 3);
    assert_eq!(doc["provided-offset"], 1);

    // Wrong media type: 415, nothing stored.
    let res = ep
        .send(
            "PATCH",
            &upload,
            &[
                DRAFT,
                INCOMPLETE,
                ("Content-Type", "application/offset+octet-stream"),
                ("Upload-Offset", "3"),
            ],
            b"d".to_vec(),
        )
        .await;
    assert_eq!(res.status, 415, "{}", res.text());

    // ?1 with a body that does not end at the known length: inconsistent-upload-length.
    let res = append(&ep, &upload, 3, true, b"d").await;
    assert_eq!(res.status, 400, "{}", res.text());
    let doc = problem(&res, "inconsistent length");
    assert_eq!(
        doc["type"],
        format!("{PROBLEMS}inconsistent-upload-length").as_str()
    );
    assert_eq!(ep.store_offset(&upload).await, 3);

    let res = append(&ep, &upload, 3, true, b"def").await;
    assert_eq!(res.status, 204, "{}", res.text());
    assert_eq!(res.header("upload-complete"), Some("?1"));
    assert_eq!(ep.stored(&upload), b"abcdef");

    // After completion: 400 completed-upload.
    let res = append(&ep, &upload, 6, false, b"g").await;
    assert_eq!(res.status, 400, "{}", res.text());
    let doc = problem(&res, "after completion");
    assert_eq!(doc["type"], format!("{PROBLEMS}completed-upload").as_str());
    assert_eq!(ep.stored(&upload), b"abcdef");
}

#[tokio::test]
async fn creation_table() {
    let ep = draft_endpoint().await;
    // (name, headers, body, status, Upload-Offset, Upload-Complete, stored bytes)
    type Row = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static [u8],
        u16,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static [u8]>,
    );
    let rows: &[Row] = &[
        (
            "?1 with the whole body completes at once",
            &[DRAFT, COMPLETE, ("Content-Type", "text/plain")],
            b"hello",
            201,
            Some("5"),
            Some("?1"),
            Some(b"hello"),
        ),
        (
            "?1 with a matching Upload-Length",
            &[DRAFT, COMPLETE, ("Upload-Length", "5")],
            b"hello",
            201,
            Some("5"),
            Some("?1"),
            Some(b"hello"),
        ),
        (
            "?0 with first bytes",
            &[DRAFT, INCOMPLETE, ("Upload-Length", "10")],
            b"hello",
            201,
            Some("5"),
            Some("?0"),
            Some(b"hello"),
        ),
        (
            "?1 with a conflicting Upload-Length",
            &[DRAFT, COMPLETE, ("Upload-Length", "9")],
            b"hello",
            400,
            None,
            None,
            None,
        ),
        (
            "Upload-Complete missing",
            &[DRAFT],
            b"",
            400,
            None,
            None,
            None,
        ),
        (
            "Upload-Complete not a boolean",
            &[DRAFT, ("Upload-Complete", "1")],
            b"",
            400,
            None,
            None,
            None,
        ),
        (
            "over the maximum size",
            &[DRAFT, INCOMPLETE, ("Upload-Length", "1001")],
            b"",
            413,
            None,
            None,
            None,
        ),
    ];
    for (name, headers, body, status, offset, complete, stored) in rows {
        let res = ep.send("POST", "/files/", headers, body.to_vec()).await;
        assert_eq!(res.status, *status, "{name}: {}", res.text());
        assert_headers(
            &res,
            name,
            &[
                ("upload-offset", *offset),
                ("upload-complete", *complete),
                ("upload-draft-interop-version", Some("8")),
            ],
        );
        if let Some(stored) = stored {
            let upload = res.header("location").expect("Location");
            assert_eq!(ep.stored(upload), *stored, "{name}");
            let head = ep.send("HEAD", upload, &[DRAFT], Vec::new()).await;
            assert_eq!(head.header("upload-complete"), *complete, "{name}: HEAD");
        }
    }
}

#[tokio::test]
async fn deferred_length_is_set_by_the_completing_append() {
    let ep = draft_endpoint().await;
    let (_, upload) = create(&ep, &[DRAFT, INCOMPLETE], b"ab").await;
    let res = append(&ep, &upload, 2, true, b"cd").await;
    assert_eq!(res.status, 204, "{}", res.text());
    assert_eq!(res.header("upload-complete"), Some("?1"));
    let head = ep.send("HEAD", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(head.header("upload-length"), Some("4"));
    // The same upload seen through tus.
    let tus = ep
        .send("HEAD", &upload, &[("Tus-Resumable", "1.0.0")], Vec::new())
        .await;
    assert_eq!(tus.header("upload-offset"), Some("4"));
    assert_eq!(tus.header("upload-length"), Some("4"));
}

#[tokio::test]
async fn cancellation() {
    let ep = draft_endpoint().await;
    let (_, upload) = create(&ep, &[DRAFT, INCOMPLETE], b"ab").await;
    let res = ep.send("DELETE", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(res.status, 204, "{}", res.text());
    let head = ep.send("HEAD", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(head.status, 404);
}

#[tokio::test]
async fn flag_off_or_header_absent_is_tus() {
    let off = Endpoint::start().await;
    let on = draft_endpoint().await;
    // (name, draft flag, headers, status, Upload-Complete)
    type Row<'a> = (
        &'a str,
        bool,
        &'a [(&'a str, &'a str)],
        u16,
        Option<&'a str>,
    );
    let rows: &[Row] = &[
        (
            "flag off: draft creation is tus",
            false,
            &[DRAFT, INCOMPLETE],
            412,
            None,
        ),
        (
            "flag on, header absent: tus",
            true,
            &[("Tus-Resumable", "1.0.0"), ("Upload-Length", "3")],
            201,
            None,
        ),
        (
            "flag on: draft",
            true,
            &[DRAFT, INCOMPLETE],
            201,
            Some("?0"),
        ),
    ];
    for (name, flag, headers, status, complete) in rows {
        let ep = if *flag { &on } else { &off };
        let res = ep.send("POST", "/files/", headers, Vec::new()).await;
        assert_eq!(res.status, *status, "{name}: {}", res.text());
        assert_eq!(res.header("upload-complete"), *complete, "{name}");
    }
    // A draft append on a tus upload with the flag off: tus rules (412), nothing stored.
    let upload = off.create(Some(3), &[]).await;
    let res = append(&off, &upload, 0, true, b"abc").await;
    assert_eq!(res.status, 412, "{}", res.text());
    assert_eq!(off.store_offset(&upload).await, 0);
    let head = off.send("HEAD", &upload, &[DRAFT], Vec::new()).await;
    assert_eq!(head.status, 412);
}
