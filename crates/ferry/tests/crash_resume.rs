//! Durability of the tus fs store against the real binary: `kill -9` the `ferry` process while a
//! PATCH is streaming, restart it on the same data directory, and resume. HEAD must report an
//! offset whose bytes are all on disk, and the finished upload must be byte-exact. Under both
//! sync policies: a crash of the process never loses what the kernel holds.

mod common;

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::{random_bytes, sha256_hex};
use sha2::{Digest, Sha256};

/// `ferry serve` on `data` with the fsync policy `fsync`.
async fn start(data: &Path, fsync: &str) -> Ferry {
    let data = data.as_os_str();
    let args: [&std::ffi::OsStr; 6] = [
        "--fsync".as_ref(),
        fsync.as_ref(),
        "--data-dir".as_ref(),
        data,
        "--ui-dir".as_ref(),
        data,
    ];
    Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await
}

/// Creates an upload of `len` bytes; returns its path and id.
async fn create(ferry: &Ferry, client: &reqwest::Client, len: usize) -> (String, String) {
    let location = common::create(client, &ferry.base, len).await;
    let id = location.rsplit('/').next().expect("id").to_owned();
    (location, id)
}

#[tokio::test]
async fn kill_9_mid_patch_then_resume_is_byte_exact() {
    kill_9_mid_patch_then_resume("always").await;
}

#[tokio::test]
async fn kill_9_mid_patch_then_resume_is_byte_exact_without_fsync() {
    kill_9_mid_patch_then_resume("never").await;
}

/// Starts a PATCH at offset 0 that declares all of `bytes` (with `headers` besides the tus
/// ones), streams its first 10 MiB, waits until `growing` holds at least 4 MiB, then kills
/// `ferry` with SIGKILL.
async fn kill_mid_patch(
    ferry: Ferry,
    client: &reqwest::Client,
    url: &str,
    bytes: &[u8],
    headers: &[(&str, String)],
    growing: &Path,
) {
    let (feed, rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(4);
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
    });
    let mut patch = client
        .patch(url)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", bytes.len().to_string());
    for (name, value) in headers {
        patch = patch.header(*name, value);
    }
    let patch = tokio::spawn(patch.body(reqwest::Body::wrap_stream(body)).send());
    for chunk in bytes[..10 << 20].chunks(64 * 1024) {
        feed.send(bytes::Bytes::copy_from_slice(chunk))
            .await
            .expect("body open");
    }
    for _ in 0..400 {
        if std::fs::metadata(growing).map(|m| m.len()).unwrap_or(0) >= 4 << 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ferry.kill9();
    drop(feed);
    let _ = patch.await;
}

/// A checksummed chunk counts only once verified: killed mid-body, its bytes are not in the
/// offset after a restart (they were held aside), and the chunk sent again is accepted.
#[tokio::test]
async fn kill_9_mid_checksummed_patch_counts_none_of_it() {
    let data = tempfile::tempdir().expect("temp dir");
    let bytes = random_bytes(24 << 20);
    let checksum = format!("sha256 {}", STANDARD.encode(Sha256::digest(&bytes)));
    let client = reqwest::Client::new();
    let ferry = start(data.path(), "always").await;
    let (location, id) = create(&ferry, &client, bytes.len()).await;
    let staged = data.path().join("tus").join(format!("{id}.stage"));
    let url = format!("{}{location}", ferry.base);
    let headers = [("Upload-Checksum", checksum.clone())];
    kill_mid_patch(ferry, &client, &url, &bytes, &headers, &staged).await;
    assert!(
        std::fs::metadata(&staged).map(|m| m.len()).unwrap_or(0) >= 4 << 20,
        "the chunk was being held aside when ferry died"
    );

    let ferry = start(data.path(), "always").await;
    let url = format!("{}{location}", ferry.base);
    let head = client
        .head(&url)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .expect("head");
    assert_eq!(head.headers()["upload-offset"], "0");
    let res = client
        .patch(&url)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Upload-Checksum", checksum)
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.clone())
        .send()
        .await
        .expect("send again");
    assert_eq!(res.status(), 204);
    let stored = std::fs::read(data.path().join("tus").join(&id)).expect("data file");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
    assert!(!staged.exists(), "the stage file is gone once committed");
}

async fn kill_9_mid_patch_then_resume(fsync: &str) {
    let data = tempfile::tempdir().expect("temp dir");
    let bytes = random_bytes(24 << 20);
    let client = reqwest::Client::new();

    let ferry = start(data.path(), fsync).await;
    let (location, id) = create(&ferry, &client, bytes.len()).await;
    let on_disk = data.path().join("tus").join(&id);

    // Stream the first 10 MiB of a PATCH that declares all 24, then kill -9 mid-body.
    let url = format!("{}{location}", ferry.base);
    kill_mid_patch(ferry, &client, &url, &bytes, &[], &on_disk).await;

    // Restart on the same directory: the offset only counts bytes that are really there.
    let ferry = start(data.path(), fsync).await;
    let url = format!("{}{location}", ferry.base);
    let head = client
        .head(&url)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), 200);
    let offset: usize = head.headers()["upload-offset"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number");
    assert!((1 << 20..=10 << 20).contains(&offset), "offset {offset}");
    let stored = std::fs::read(&on_disk).expect("data file");
    assert_eq!(stored.len(), offset);
    assert!(
        stored == bytes[..offset],
        "stored prefix differs from the sent bytes"
    );

    let res = client
        .patch(&url)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[offset..].to_vec())
        .send()
        .await
        .expect("resume");
    assert_eq!(res.status(), 204);
    let downloaded = client
        .get(&url)
        .send()
        .await
        .expect("get")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&downloaded), sha256_hex(&bytes));
}
