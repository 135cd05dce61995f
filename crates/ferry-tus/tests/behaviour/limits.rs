//! Limits: max size before any body is read, idle bodies cut off, per-client cap.

use std::time::Duration;

use tokio::time::Instant;

use ferry_tus::TusConfig;

use crate::common::Endpoint;
use crate::streaming::{OpenPatch, offset_reaches};

fn headers(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
}

#[tokio::test]
async fn too_large_is_refused_before_the_body_is_read() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(1000),
        ..TusConfig::default()
    })
    .await;
    // The body never ends: only an answer given before reading it can arrive.
    let post = OpenPatch::start(
        &ep,
        "POST",
        "/files/",
        &headers(&[
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Length", "1001"),
            ("Content-Type", "application/offset+octet-stream"),
        ]),
    );
    post.send(b"x").await;
    let answer = tokio::time::timeout(Duration::from_secs(5), post.answer)
        .await
        .expect("answered before the body ended")
        .expect("join");
    assert_eq!(answer, Ok(413));

    let upload = ep.create(Some(1000), &[]).await;
    let patch = OpenPatch::start(
        &ep,
        "PATCH",
        &upload,
        &headers(&[
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Offset", "0"),
            ("Content-Type", "application/offset+octet-stream"),
            ("Content-Length", "1001"),
        ]),
    );
    patch.send(b"x").await;
    let answer = tokio::time::timeout(Duration::from_secs(5), patch.answer)
        .await
        .expect("answered before the body ended")
        .expect("join");
    assert_eq!(answer, Ok(413));
    assert_eq!(ep.store_offset(&upload).await, 0);
}

#[tokio::test(start_paused = true)]
async fn a_trickling_body_is_cut_off_and_a_steady_one_is_not() {
    let ep = Endpoint::with(TusConfig {
        idle_timeout: Duration::from_millis(400),
        ..TusConfig::default()
    })
    .await;
    let upload = ep.create(Some(1 << 20), &[]).await;
    let trickle = OpenPatch::start(
        &ep,
        "PATCH",
        &upload,
        &headers(&[
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Offset", "0"),
            ("Content-Type", "application/offset+octet-stream"),
        ]),
    );
    // One byte every 150 ms: alive on the wire, but under 1 KiB per idle window. The clock is
    // paused, so the pace is exact and the 400 ms window ends between two bytes.
    let started = Instant::now();
    let mut sent = 0u64;
    while !trickle.answer.is_finished() && sent < 20 {
        if trickle
            .feed
            .send(bytes::Bytes::from_static(b"z"))
            .await
            .is_err()
        {
            break;
        }
        sent += 1;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(trickle.answer.is_finished(), "trickling body not cut off");
    // Cut off at the end of the first idle window, not a later one.
    assert!(started.elapsed() < Duration::from_millis(600));
    assert_eq!(trickle.answer.await.expect("join"), Ok(408));
    // What arrived is kept, so the client can resume.
    let kept = ep.store_offset(&upload).await;
    assert!(kept <= sent && kept > 0, "kept {kept} of {sent}");

    // 8 KiB every 100 ms for 1.2 s (three idle windows) is fine.
    let other = ep.create(Some(96 * 1024), &[]).await;
    let steady = OpenPatch::start(
        &ep,
        "PATCH",
        &other,
        &headers(&[
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Offset", "0"),
            ("Content-Type", "application/offset+octet-stream"),
        ]),
    );
    for _ in 0..12 {
        steady.send(&[1u8; 8 * 1024]).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(steady.feed);
    assert_eq!(steady.answer.await.expect("join"), Ok(204));
}

#[tokio::test]
async fn uploads_written_at_once_are_capped_per_client() {
    let ep = Endpoint::with(TusConfig {
        max_uploads_per_client: 2,
        ..TusConfig::default()
    })
    .await;
    let mut open = Vec::new();
    for _ in 0..2 {
        let upload = ep.create(Some(10_000), &[]).await;
        let patch = OpenPatch::start(
            &ep,
            "PATCH",
            &upload,
            &headers(&[
                ("Tus-Resumable", "1.0.0"),
                ("Upload-Offset", "0"),
                ("Content-Type", "application/offset+octet-stream"),
            ]),
        );
        patch.send(b"abc").await;
        offset_reaches(&ep, &upload, 3).await;
        open.push(patch);
    }
    let third = ep.create(Some(10), &[]).await;
    let res = ep.patch(&third, 0, b"0123456789").await;
    assert_eq!(res.status, 429);
    assert_eq!(res.header("retry-after"), Some("1"));
    // A finished request gives its slot back.
    let first = open.remove(0);
    drop(first.feed);
    assert_eq!(first.answer.await.expect("join"), Ok(204));
    assert_eq!(ep.patch(&third, 0, b"0123456789").await.status, 204);
}

/// PATCHes a whole 10-byte upload as the client `forwarded_for` says it is.
async fn patch_as(ep: &Endpoint, upload: &str, forwarded_for: &str) -> u16 {
    let headers = [
        ("Tus-Resumable", "1.0.0"),
        ("Upload-Offset", "0"),
        ("Content-Type", "application/offset+octet-stream"),
        ("X-Forwarded-For", forwarded_for),
    ];
    ep.send("PATCH", upload, &headers, b"0123456789".to_vec())
        .await
        .status
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_cap() {
    let trusted = |nets: &[&str]| -> Vec<ipnet::IpNet> {
        nets.iter().map(|n| n.parse().expect("net")).collect()
    };
    for (proxies, other_client_status) in [(trusted(&["127.0.0.1/32"]), 204), (vec![], 429)] {
        let ep = Endpoint::with(TusConfig {
            max_uploads_per_client: 1,
            trusted_proxies: proxies.clone(),
            ..TusConfig::default()
        })
        .await;
        // Client A holds its one slot with a PATCH in flight.
        let held = ep.create(Some(10_000), &[]).await;
        let patch = OpenPatch::start(
            &ep,
            "PATCH",
            &held,
            &headers(&[
                ("Tus-Resumable", "1.0.0"),
                ("Upload-Offset", "0"),
                ("Content-Type", "application/offset+octet-stream"),
                ("X-Forwarded-For", "198.51.100.1"),
            ]),
        );
        patch.send(b"abc").await;
        offset_reaches(&ep, &held, 3).await;

        let upload = ep.create(Some(10), &[]).await;
        assert_eq!(
            patch_as(&ep, &upload, "198.51.100.2").await,
            other_client_status,
            "another client, proxies {proxies:?}"
        );
        let upload = ep.create(Some(10), &[]).await;
        // A forged entry left of the proxy's own does not make client A someone else.
        assert_eq!(
            patch_as(&ep, &upload, "203.0.113.7, 198.51.100.1").await,
            429,
            "client A again, proxies {proxies:?}"
        );
        drop(patch.feed);
        assert_eq!(patch.answer.await.expect("join"), Ok(204));
    }
}

#[tokio::test]
async fn a_deferred_upload_is_stored_up_to_the_maximum_size_and_no_further() {
    let ep = Endpoint::with(TusConfig {
        max_size: Some(1000),
        ..TusConfig::default()
    })
    .await;
    let upload = ep.create(None, &[]).await;
    let bytes = ferry_testkit::random_bytes(1500);
    assert_eq!(ep.patch(&upload, 0, &bytes[..400]).await.status, 204);
    // Chunked (no Content-Length): what fits is stored, then 413 for the upload's size.
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes[400..].chunks(250).map(|c| Ok(c.to_vec())).collect();
    let res = ep
        .client
        .patch(ep.url(&upload))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "400")
        .header("Content-Type", "application/offset+octet-stream")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            pieces,
        )))
        .send()
        .await
        .expect("PATCH");
    assert_eq!(res.status(), 413);
    assert_eq!(
        res.text().await.expect("text"),
        "upload is larger than the maximum size\n"
    );
    assert_eq!(
        ferry_testkit::sha256_hex(&ep.stored(&upload)),
        ferry_testkit::sha256_hex(&bytes[..1000])
    );
    // Declared: refused before a byte is read, with the same words.
    let other = ep.create(None, &[]).await;
    let res = ep.patch(&other, 0, &bytes[..1001]).await;
    assert_eq!(
        (res.status, res.text()),
        (413, "upload is larger than the maximum size\n".to_owned())
    );
    assert_eq!(ep.store_offset(&other).await, 0);
}
