//! The network between a client and `ferry` failing: a connection cut mid-PATCH (through the
//! fault proxy) keeps what arrived and the upload resumes byte-exact; a body that stops coming
//! is cut at `--idle-timeout` with what arrived kept; a client trickling its bytes through a
//! slow link holds up nobody else.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::proxy::{FaultProxy, Mode};
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::StreamExt;
use reqwest::Client;

use crate::tus::{BIN, Sent, create, download, offset, paced_patch, patch, tus};

async fn start(extra: &[&str]) -> (Ferry, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("temp dir");
    let dir = data.path().display().to_string();
    let mut args = vec!["--data-dir", &dir, "--no-ui", "--fsync", "always"];
    args.extend_from_slice(extra);
    (Ferry::start(BIN, args).await, data)
}

/// Waits until `done` holds, checking every 10 ms; panics after `within`.
async fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_connection_cut_mid_patch_keeps_what_arrived_and_resumes_byte_exact() {
    let (ferry, _data) = start(&[]).await;
    let proxy = FaultProxy::in_front_of(&ferry.base).await;
    let client = Client::new();
    let bytes = random_bytes(8 << 20);
    let url = create(&client, &proxy.base_url(), bytes.len()).await;
    let sent = Sent::default();
    let pace = Duration::from_millis(5);
    let patching = {
        let (client, url, body, sent) = (client.clone(), url.clone(), bytes.clone(), sent.clone());
        tokio::spawn(
            async move { paced_patch(&client, &url, 0, body, 64 * 1024, pace, &sent).await },
        )
    };
    until(Duration::from_secs(30), "2 MiB through the proxy", || {
        proxy.bytes_upstream() >= 2 << 20
    })
    .await;
    proxy.set_mode(Mode::Cut);
    let cut = patching.await.expect("patch task");
    assert!(
        cut.is_err(),
        "the cut PATCH got no answer: {:?}",
        cut.map(|r| r.status())
    );

    proxy.set_mode(Mode::Pass);
    let kept = offset(&client, &url).await.expect("HEAD after the cut");
    assert!(kept > 0 && kept < bytes.len() as u64, "kept {kept}");
    let res = patch(&client, &url, kept, bytes[kept as usize..].to_vec()).await;
    assert_eq!(res.status(), 204);
    assert_eq!(
        sha256_hex(&download(&client, &url).await),
        sha256_hex(&bytes)
    );
    let before_cut = sent.load(Ordering::Relaxed);
    println!(
        "faults/network: cut after {before_cut} B handed over, {kept} B kept, {} B re-sent",
        before_cut - kept
    );
}

#[tokio::test]
async fn a_stalled_body_is_cut_at_the_idle_timeout_and_what_arrived_is_kept() {
    let (ferry, _data) = start(&["--idle-timeout", "1"]).await;
    let client = Client::new();
    let bytes = random_bytes(4 << 20);
    let url = create(&client, &ferry.base, bytes.len()).await;
    let first = bytes::Bytes::copy_from_slice(&bytes[..1 << 20]);
    // 1 MiB, then nothing more, the connection left open.
    let body = futures_util::stream::iter([Ok::<_, std::io::Error>(first)])
        .chain(futures_util::stream::pending());
    let started = Instant::now();
    let res = tus(&client, reqwest::Method::PATCH, &url)
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", bytes.len().to_string())
        .body(reqwest::Body::wrap_stream(body))
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("an answer before the client's own 20 s bound");
    let waited = started.elapsed();
    assert_eq!(res.status(), 408);
    assert_eq!(
        res.text().await.expect("message"),
        "the request body was idle for too long\n"
    );
    assert_eq!(
        offset(&client, &url).await,
        Ok(1 << 20),
        "what arrived is kept"
    );
    let res = patch(&client, &url, 1 << 20, bytes[1 << 20..].to_vec()).await;
    assert_eq!(res.status(), 204);
    assert_eq!(
        sha256_hex(&download(&client, &url).await),
        sha256_hex(&bytes)
    );
    println!("faults/network: a stalled body answered 408 after {waited:?} (--idle-timeout 1)");
}

#[tokio::test]
async fn a_trickling_client_does_not_hold_up_the_others() {
    let (ferry, _data) = start(&[]).await;
    let proxy = FaultProxy::in_front_of(&ferry.base).await;
    let client = Client::new();
    let slow_bytes = random_bytes(4 << 20);
    let slow_url = create(&client, &ferry.base, slow_bytes.len()).await;
    // Over the idle rule's 1 KiB per window, far under everyone else.
    proxy.set_mode(Mode::Trickle {
        bytes: 4096,
        every: Duration::from_millis(100),
    });
    let slow_via_proxy = slow_url.replacen(&ferry.base, &proxy.base_url(), 1);
    let slow = {
        let (client, body) = (client.clone(), slow_bytes.clone());
        tokio::spawn(async move { patch(&client, &slow_via_proxy, 0, body).await.status() })
    };
    until(Duration::from_secs(10), "the trickle started", || {
        proxy.bytes_upstream() > 0
    })
    .await;

    let mut others = Vec::new();
    for _ in 0..8 {
        let bytes = random_bytes(4 << 20);
        let url = create(&client, &ferry.base, bytes.len()).await;
        let client = client.clone();
        others.push(tokio::spawn(async move {
            let res = patch(&client, &url, 0, bytes.clone()).await;
            assert_eq!(res.status(), 204);
            assert_eq!(
                sha256_hex(&download(&client, &url).await),
                sha256_hex(&bytes)
            );
        }));
    }
    for other in others {
        other.await.expect("a fast upload");
    }
    assert!(
        !slow.is_finished(),
        "the others finished while the trickle still ran"
    );
    let trickled = proxy.bytes_upstream();
    proxy.set_mode(Mode::Pass);
    assert_eq!(slow.await.expect("slow task"), 204);
    assert_eq!(
        sha256_hex(&download(&client, &slow_url).await),
        sha256_hex(&slow_bytes)
    );
    println!(
        "faults/network: 8 uploads of 4 MiB finished while a trickling client had sent {trickled} B"
    );
}
