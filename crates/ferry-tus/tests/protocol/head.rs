//! HEAD: offset, length, metadata, no-store, no body; unknown and foreign ids are 404.

use crate::common::{Case, Endpoint, V, run_table};

#[tokio::test]
async fn head_table() {
    let ep = Endpoint::start().await;
    let cases = [
        Case {
            name: "partly written",
            method: "HEAD",
            path: "/files/{id}",
            headers: &[V],
            body: b"",
            status: 200,
            expect: &[
                ("upload-offset", Some("4")),
                ("upload-length", Some("10")),
                ("upload-defer-length", None),
                ("upload-metadata", Some("filename YS50eHQ=")),
                ("cache-control", Some("no-store")),
                ("tus-resumable", Some("1.0.0")),
            ],
        },
        Case {
            name: "wrong version",
            method: "HEAD",
            path: "/files/{id}",
            headers: &[("Tus-Resumable", "0.1.0")],
            body: b"",
            status: 412,
            expect: &[("upload-offset", None), ("tus-version", Some("1.0.0"))],
        },
        Case {
            name: "unknown id",
            method: "HEAD",
            path: "/files/0123456789abcdef0123456789abcdef",
            headers: &[V],
            body: b"",
            status: 404,
            expect: &[("upload-offset", None)],
        },
        Case {
            name: "traversal",
            method: "HEAD",
            path: "/files/..%2F..%2Fetc%2Fpasswd",
            headers: &[V],
            body: b"",
            status: 404,
            expect: &[("upload-offset", None)],
        },
        Case {
            name: "NUL",
            method: "HEAD",
            path: "/files/0123456789abcdef0123456789abcde%00",
            headers: &[V],
            body: b"",
            status: 404,
            expect: &[],
        },
        Case {
            name: "upper case id",
            method: "HEAD",
            path: "/files/0123456789ABCDEF0123456789ABCDEF",
            headers: &[V],
            body: b"",
            status: 404,
            expect: &[],
        },
    ];
    run_table(&ep, Some(10), b"abcd", &cases).await;

    let huge = format!("/files/{}", "a".repeat(5000));
    let res = ep.send("HEAD", &huge, &[V], Vec::new()).await;
    assert_eq!(res.status, 404);
    assert!(res.body.is_empty());
}

#[tokio::test]
async fn deferred_and_empty_uploads() {
    let ep = Endpoint::start().await;
    let deferred = ep.create(None, &[]).await;
    let res = ep.send("HEAD", &deferred, &[V], Vec::new()).await;
    assert_eq!(res.header("upload-offset"), Some("0"));
    assert_eq!(res.header("upload-defer-length"), Some("1"));
    assert_eq!(res.header("upload-length"), None);
    assert!(res.header("upload-expires").is_some());

    let empty = ep.create(Some(0), &[]).await;
    let res = ep.send("HEAD", &empty, &[V], Vec::new()).await;
    assert_eq!(res.header("upload-offset"), Some("0"));
    assert_eq!(res.header("upload-length"), Some("0"));
    // A finished upload does not expire.
    assert_eq!(res.header("upload-expires"), None);
}
