//! DELETE (termination) and its method override.

use crate::common::{Case, Endpoint, V, run_table};

#[tokio::test]
async fn delete_table() {
    let ep = Endpoint::start().await;
    let cases = [
        Case {
            name: "terminate",
            method: "DELETE",
            path: "/files/{id}",
            headers: &[V],
            body: b"",
            status: 204,
            expect: &[("tus-resumable", Some("1.0.0"))],
        },
        Case {
            name: "override",
            method: "POST",
            path: "/files/{id}",
            headers: &[V, ("X-HTTP-Method-Override", "DELETE")],
            body: b"",
            status: 204,
            expect: &[],
        },
        Case {
            name: "wrong version",
            method: "DELETE",
            path: "/files/{id}",
            headers: &[("Tus-Resumable", "0.2.0")],
            body: b"",
            status: 412,
            expect: &[],
        },
        Case {
            name: "unknown",
            method: "DELETE",
            path: "/files/0000000000000000000000000000000a",
            headers: &[V],
            body: b"",
            status: 404,
            expect: &[],
        },
    ];
    run_table(&ep, Some(10), b"ab", &cases).await;
}

#[tokio::test]
async fn terminated_uploads_are_gone_with_their_bytes() {
    let ep = Endpoint::start().await;
    let upload = ep.create(Some(10), &[]).await;
    assert_eq!(ep.patch(&upload, 0, b"abc").await.status, 204);
    assert_eq!(
        ep.send("DELETE", &upload, &[V], Vec::new()).await.status,
        204
    );
    assert_eq!(ep.send("HEAD", &upload, &[V], Vec::new()).await.status, 404);
    assert_eq!(ep.patch(&upload, 3, b"d").await.status, 404);
    assert_eq!(std::fs::read_dir(ep.dir.path()).expect("dir").count(), 0);
}
