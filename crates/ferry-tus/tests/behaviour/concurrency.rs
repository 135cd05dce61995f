//! One writer per upload: a newer request ends the one in flight, HEAD answers promptly with
//! the durable offset, and the final bytes are exact.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_testkit::{random_bytes, sha256_hex};
use ferry_tus::lock::{LockError, UploadLease, UploadLock};
use ferry_tus::{TusConfig, UploadId};

use crate::common::Endpoint;
use crate::streaming::{OpenPatch, offset_reaches};

fn patch_headers(offset: u64, length: usize) -> Vec<(&'static str, String)> {
    vec![
        ("Tus-Resumable", "1.0.0".to_owned()),
        ("Upload-Offset", offset.to_string()),
        ("Content-Type", "application/offset+octet-stream".to_owned()),
        ("Content-Length", length.to_string()),
    ]
}

#[tokio::test]
async fn head_ends_a_hung_patch_and_reports_the_durable_offset() {
    let ep = Endpoint::start().await;
    let bytes = random_bytes(1 << 20);
    let upload = ep.create(Some(bytes.len() as u64), &[]).await;

    // A PATCH that sends 300 KiB of its 1 MiB and then hangs, connection open.
    let hung = OpenPatch::start(&ep, "PATCH", &upload, &patch_headers(0, bytes.len()));
    hung.send(&bytes[..300 * 1024]).await;
    offset_reaches(&ep, &upload, 300 * 1024).await;

    let started = Instant::now();
    let head = ep
        .send("HEAD", &upload, &[("Tus-Resumable", "1.0.0")], Vec::new())
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "HEAD waited on the hung PATCH"
    );
    assert_eq!(head.status, 200);
    let offset: u64 = head
        .header("upload-offset")
        .expect("offset")
        .parse()
        .expect("number");
    assert_eq!(
        offset,
        300 * 1024,
        "HEAD must report every byte the hung PATCH stored"
    );
    assert_eq!(ep.stored(&upload), bytes[..offset as usize]);
    // The hung request was ended (409 superseded, or its connection closed).
    let answer = tokio::time::timeout(Duration::from_secs(5), hung.answer)
        .await
        .expect("hung PATCH still open")
        .expect("join");
    assert!(matches!(answer, Ok(409) | Err(_)), "{answer:?}");

    let res = ep.patch(&upload, offset, &bytes[offset as usize..]).await;
    assert_eq!(res.status, 204);
    assert_eq!(sha256_hex(&ep.stored(&upload)), sha256_hex(&bytes));
}

#[tokio::test]
async fn two_patches_on_one_upload_leave_exact_bytes() {
    let ep = Endpoint::start().await;
    let bytes = random_bytes(2 << 20);
    let upload = ep.create(Some(bytes.len() as u64), &[]).await;

    let first = OpenPatch::start(&ep, "PATCH", &upload, &patch_headers(0, bytes.len()));
    first.send(&bytes[..512 * 1024]).await;
    offset_reaches(&ep, &upload, 512 * 1024).await;

    // A second PATCH at offset 0 with the whole file ends the first; it then either fits
    // (nothing stored yet) or is told the real offset.
    let second = ep.patch(&upload, 0, &bytes).await;
    let first_answer = tokio::time::timeout(Duration::from_secs(5), first.answer)
        .await
        .expect("first PATCH still open")
        .expect("join");
    assert!(matches!(first_answer, Ok(409) | Err(_)), "{first_answer:?}");
    if second.status == 409 {
        let head = ep
            .send("HEAD", &upload, &[("Tus-Resumable", "1.0.0")], Vec::new())
            .await;
        let offset: usize = head
            .header("upload-offset")
            .expect("offset")
            .parse()
            .expect("n");
        assert_eq!(
            ep.patch(&upload, offset as u64, &bytes[offset..])
                .await
                .status,
            204
        );
    } else {
        assert_eq!(second.status, 204);
    }
    assert_eq!(sha256_hex(&ep.stored(&upload)), sha256_hex(&bytes));
}

/// A lock service that cannot be reached, as a shared lock is when its store is down.
#[derive(Debug)]
struct Unreachable;

#[async_trait::async_trait]
impl UploadLock for Unreachable {
    async fn acquire(&self, _: &UploadId) -> Result<UploadLease, LockError> {
        Err(LockError::Unavailable(
            "connection refused by 10.0.0.7".into(),
        ))
    }

    async fn try_acquire(&self, _: &UploadId) -> Result<Option<UploadLease>, LockError> {
        Err(LockError::Unavailable(
            "connection refused by 10.0.0.7".into(),
        ))
    }
}

#[tokio::test]
async fn an_unreachable_lock_is_a_503_that_names_no_cause() {
    let ep = Endpoint::with(TusConfig {
        lock: Arc::new(Unreachable),
        ietf_draft: true,
        ..TusConfig::default()
    })
    .await;
    // Creation without bytes takes no lock.
    let upload = ep.create(Some(10), &[]).await;
    let v = ("Tus-Resumable", "1.0.0");
    let draft = ("Upload-Draft-Interop-Version", "8");
    let answers = [
        ep.patch(&upload, 0, b"0123456789").await,
        ep.send("HEAD", &upload, &[v], Vec::new()).await,
        ep.send("DELETE", &upload, &[v], Vec::new()).await,
        ep.send("HEAD", &upload, &[draft], Vec::new()).await,
    ];
    for (i, res) in answers.iter().enumerate() {
        assert_eq!(res.status, 503, "request {i}");
        assert_eq!(res.header("retry-after"), Some("1"), "request {i}");
    }
    assert_eq!(
        answers[0].text(),
        "the upload cannot be locked right now; try again shortly\n"
    );
    assert_eq!(ep.store_offset(&upload).await, 0);
    // The sweeper skips what it cannot lock: the expired upload is still there.
    assert_eq!(ep.state.sweep(u64::MAX / 2).await, 0);
    let id = upload.rsplit('/').next().expect("id");
    assert!(ep.dir.path().join(format!("{id}.info")).exists());
}
