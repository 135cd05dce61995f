//! PATCH: offsets, media type, lengths, deferred length, checksums, method override.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ferry_tus::TusConfig;
use sha2::Digest;

use crate::common::{Case, Endpoint, OCTETS, V, run_table};

#[tokio::test]
async fn patch_table() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(100),
        ..TusConfig::default()
    })
    .await;
    let cases = [
        Case {
            name: "append",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, OCTETS, ("Upload-Offset", "4")],
            body: b"efg",
            status: 204,
            expect: &[
                ("upload-offset", Some("7")),
                ("tus-resumable", Some("1.0.0")),
            ],
        },
        Case {
            name: "wrong offset",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, OCTETS, ("Upload-Offset", "3")],
            body: b"efg",
            status: 409,
            expect: &[("upload-offset", None)],
        },
        Case {
            name: "missing offset",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, OCTETS],
            body: b"efg",
            status: 400,
            expect: &[],
        },
        Case {
            name: "wrong media type",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, ("Content-Type", "text/plain"), ("Upload-Offset", "4")],
            body: b"efg",
            status: 415,
            expect: &[],
        },
        Case {
            name: "wrong version",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[("Tus-Resumable", "2.0.0"), OCTETS, ("Upload-Offset", "4")],
            body: b"efg",
            status: 412,
            expect: &[],
        },
        Case {
            name: "past the length",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, OCTETS, ("Upload-Offset", "4")],
            body: b"0123456789",
            status: 413,
            expect: &[],
        },
        Case {
            name: "changing a known length",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[V, OCTETS, ("Upload-Offset", "4"), ("Upload-Length", "11")],
            body: b"e",
            status: 400,
            expect: &[],
        },
        Case {
            name: "unknown id",
            method: "PATCH",
            path: "/files/ffffffffffffffffffffffffffffffff",
            headers: &[V, OCTETS, ("Upload-Offset", "0")],
            body: b"e",
            status: 404,
            expect: &[],
        },
        Case {
            name: "unsupported checksum algorithm",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[
                V,
                OCTETS,
                ("Upload-Offset", "4"),
                ("Upload-Checksum", "sha512 AAAA"),
            ],
            body: b"e",
            status: 400,
            expect: &[],
        },
        Case {
            name: "checksum mismatch",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[
                V,
                OCTETS,
                ("Upload-Offset", "4"),
                ("Upload-Checksum", "sha1 qvTGHdzF6KLavt4PO0gs2a6pQ00="),
            ],
            body: b"world",
            status: 460,
            expect: &[],
        },
        Case {
            name: "checksum match",
            method: "PATCH",
            path: "/files/{id}",
            headers: &[
                V,
                OCTETS,
                ("Upload-Offset", "4"),
                ("Upload-Checksum", "sha1 qvTGHdzF6KLavt4PO0gs2a6pQ00="),
            ],
            body: b"hello",
            status: 204,
            expect: &[("upload-offset", Some("9"))],
        },
        Case {
            name: "method override",
            method: "POST",
            path: "/files/{id}",
            headers: &[
                V,
                OCTETS,
                ("Upload-Offset", "4"),
                ("X-HTTP-Method-Override", "PATCH"),
            ],
            body: b"ef",
            status: 204,
            expect: &[("upload-offset", Some("6"))],
        },
        Case {
            name: "POST on an upload without override",
            method: "POST",
            path: "/files/{id}",
            headers: &[V, OCTETS, ("Upload-Offset", "4")],
            body: b"ef",
            status: 405,
            expect: &[],
        },
    ];
    run_table(&ep, Some(10), b"abcd", &cases).await;
}

#[tokio::test]
async fn checksum_mismatch_discards_the_chunk() {
    let ep = Endpoint::start().await;
    let upload = ep.create(Some(20), &[]).await;
    assert_eq!(ep.patch(&upload, 0, b"0123").await.status, 204);
    let mut offset = 4;
    for (algorithm, digest) in [
        ("sha1", sha1::Sha1::digest(b"good").to_vec()),
        ("md5", md5::Md5::digest(b"good").to_vec()),
        ("sha256", sha2::Sha256::digest(b"good").to_vec()),
        ("crc32", crc32fast::hash(b"good").to_be_bytes().to_vec()),
    ] {
        let checksum = format!("{algorithm} {}", STANDARD.encode(&digest));
        let at = offset.to_string();
        let headers = [
            V,
            OCTETS,
            ("Upload-Offset", at.as_str()),
            ("Upload-Checksum", &checksum),
        ];
        let res = ep.send("PATCH", &upload, &headers, b"bad!".to_vec()).await;
        assert_eq!(res.status, 460, "{algorithm}");
        assert_eq!(res.text(), "checksum mismatch\n");
        let head = ep.send("HEAD", &upload, &[V], Vec::new()).await;
        assert_eq!(
            head.header("upload-offset"),
            Some(at.as_str()),
            "{algorithm}"
        );
        assert_eq!(
            ep.stored(&upload).len(),
            offset,
            "{algorithm}: chunk not discarded"
        );
        let res = ep.send("PATCH", &upload, &headers, b"good".to_vec()).await;
        assert_eq!(res.status, 204, "{algorithm}");
        offset += 4;
    }
    assert_eq!(ep.stored(&upload), b"0123goodgoodgoodgood");
}

#[tokio::test]
async fn deferred_length_is_set_once_on_a_patch() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(50),
        ..TusConfig::default()
    })
    .await;
    let upload = ep.create(None, &[]).await;
    assert_eq!(ep.patch(&upload, 0, b"hello ").await.status, 204);
    let too_big = ep
        .send(
            "PATCH",
            &upload,
            &[V, OCTETS, ("Upload-Offset", "6"), ("Upload-Length", "51")],
            Vec::new(),
        )
        .await;
    assert_eq!(too_big.status, 413);
    let below = ep
        .send(
            "PATCH",
            &upload,
            &[V, OCTETS, ("Upload-Offset", "6"), ("Upload-Length", "5")],
            Vec::new(),
        )
        .await;
    assert_eq!(below.status, 400);
    let res = ep
        .send(
            "PATCH",
            &upload,
            &[V, OCTETS, ("Upload-Offset", "6"), ("Upload-Length", "11")],
            b"world".to_vec(),
        )
        .await;
    assert_eq!(res.status, 204, "{}", res.text());
    assert_eq!(res.header("upload-offset"), Some("11"));
    let head = ep.send("HEAD", &upload, &[V], Vec::new()).await;
    assert_eq!(head.header("upload-length"), Some("11"));
    assert_eq!(ep.stored(&upload), b"hello world");
    // Past max size while still deferred: refused before storing.
    let other = ep.create(None, &[]).await;
    assert_eq!(ep.patch(&other, 0, &[7u8; 51]).await.status, 413);
}

/// A chunked PATCH whose `Upload-Checksum` comes as a trailer, over a raw socket (HTTP clients
/// rarely send trailers). Returns the status.
async fn patch_with_trailer(
    ep: &Endpoint,
    path: &str,
    offset: u64,
    body: &[u8],
    trailer: &str,
) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(ep.addr)
        .await
        .expect("connect");
    let head = format!(
        "PATCH {path} HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: {offset}\r\n\
         Content-Type: application/offset+octet-stream\r\nTransfer-Encoding: chunked\r\n\
         Trailer: Upload-Checksum\r\nConnection: close\r\n\r\n{:x}\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    socket.write_all(body).await.expect("body");
    let end = format!("\r\n0\r\n{trailer}\r\n\r\n");
    socket.write_all(end.as_bytes()).await.expect("trailer");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.expect("answer");
    answer
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .expect("status line")
}

#[tokio::test]
async fn checksum_trailer_is_verified() {
    let ep = Endpoint::start().await;
    let upload = ep.create(Some(8), &[]).await;
    let good = format!(
        "Upload-Checksum: sha256 {}",
        STANDARD.encode(sha2::Sha256::digest(b"good"))
    );
    let bad = format!(
        "Upload-Checksum: md5 {}",
        STANDARD.encode(md5::Md5::digest(b"nope"))
    );
    assert_eq!(
        patch_with_trailer(&ep, &upload, 0, b"good", &good).await,
        204
    );
    assert_eq!(
        patch_with_trailer(&ep, &upload, 4, b"evil", &bad).await,
        460
    );
    assert_eq!(ep.stored(&upload), b"good", "the mismatched chunk was kept");
    // Announced but never sent: the chunk cannot be verified and is discarded.
    assert_eq!(
        patch_with_trailer(&ep, &upload, 4, b"evil", "X-Other: 1").await,
        400
    );
    assert_eq!(ep.stored(&upload), b"good");
    let crc = format!(
        "Upload-Checksum: crc32 {}",
        STANDARD.encode(crc32fast::hash(b"more").to_be_bytes())
    );
    assert_eq!(
        patch_with_trailer(&ep, &upload, 4, b"more", &crc).await,
        204
    );
    assert_eq!(ep.stored(&upload), b"goodmore");
}
