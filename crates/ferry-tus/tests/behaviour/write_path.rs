//! The fs store's write path end to end: bodies whose chunks are tiny (copied into runs) and
//! huge (kept and written as they are) land byte for byte, and a PATCH cut off mid-body leaves
//! exactly the bytes it stored, from which the upload resumes.

use ferry_testkit::{random_bytes, sha256_hex};

use crate::common::Endpoint;
use crate::streaming::{OpenPatch, offset_reaches};

fn patch_headers(offset: u64, length: Option<usize>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("Tus-Resumable", "1.0.0".to_owned()),
        ("Upload-Offset", offset.to_string()),
        ("Content-Type", "application/offset+octet-stream".to_owned()),
    ];
    if let Some(length) = length {
        headers.push(("Content-Length", length.to_string()));
    }
    headers
}

/// Chunk sizes mixing thousands of tiny pieces with a few larger than a whole batch (1 MiB),
/// and pieces on both sides of the size below which the store copies them (16 KiB).
fn mixed_sizes() -> Vec<usize> {
    let mut sizes: Vec<usize> = (0..3_000).map(|i| 1 + i % 37).collect();
    sizes.extend([3 * 1024 * 1024 + 5, 16 * 1024 - 1, 16 * 1024, 1]);
    sizes.extend((0..2_000).map(|i| 1 + i % 11));
    sizes.extend([(3 << 19) + 3, 700_001, 2, 3]);
    sizes
}

async fn head_offset(ep: &Endpoint, upload: &str) -> u64 {
    let head = ep
        .send("HEAD", upload, &[("Tus-Resumable", "1.0.0")], Vec::new())
        .await;
    assert_eq!(head.status, 200, "{}", head.text());
    head.header("upload-offset")
        .expect("Upload-Offset")
        .parse()
        .expect("number")
}

#[tokio::test]
async fn tiny_and_huge_chunks_are_stored_byte_for_byte() {
    let ep = Endpoint::start().await;
    let sizes = mixed_sizes();
    let bytes = random_bytes(sizes.iter().sum());
    let upload = ep.create(Some(bytes.len() as u64), &[]).await;
    // No Content-Length: a chunked body, so the server receives the pieces as sent.
    let patch = OpenPatch::start(&ep, "PATCH", &upload, &patch_headers(0, None));
    let mut at = 0;
    for size in sizes {
        patch.send(&bytes[at..at + size]).await;
        at += size;
    }
    drop(patch.feed);
    assert_eq!(patch.answer.await.expect("join"), Ok(204));
    assert_eq!(head_offset(&ep, &upload).await, bytes.len() as u64);
    assert_eq!(sha256_hex(&ep.stored(&upload)), sha256_hex(&bytes));
}

#[tokio::test]
async fn a_patch_cut_off_mid_body_resumes_at_exactly_the_stored_offset() {
    let ep = Endpoint::start().await;
    let sizes = mixed_sizes();
    let bytes = random_bytes(sizes.iter().sum::<usize>() + (1 << 20));
    let upload = ep.create(Some(bytes.len() as u64), &[]).await;
    let patch = OpenPatch::start(&ep, "PATCH", &upload, &patch_headers(0, Some(bytes.len())));
    let mut at = 0;
    for size in sizes {
        patch.send(&bytes[at..at + size]).await;
        at += size;
    }
    // Full batches are on disk; the rest waits in the one being filled when the client goes.
    offset_reaches(&ep, &upload, 3 << 20).await;
    patch.answer.abort();
    drop(patch.feed);

    let offset = head_offset(&ep, &upload).await;
    assert!(
        offset >= 3 << 20 && offset <= at as u64,
        "offset {offset}, sent {at}"
    );
    let stored = ep.stored(&upload);
    assert_eq!(stored.len() as u64, offset, "HEAD counts every stored byte");
    assert_eq!(
        stored,
        bytes[..offset as usize],
        "stored bytes are the sent prefix"
    );

    let rest = ep.patch(&upload, offset, &bytes[offset as usize..]).await;
    assert_eq!(rest.status, 204, "{}", rest.text());
    assert_eq!(
        rest.header("upload-offset"),
        Some(bytes.len().to_string().as_str())
    );
    assert_eq!(sha256_hex(&ep.stored(&upload)), sha256_hex(&bytes));
}
