//! A full disk: `ferry` runs with `--data-dir` on a tmpfs of a few MiB in its own mount
//! namespace ([`TinyDisk`]); the test fills and frees it through `/proc/PID/root`. A write past
//! the space answers 507 with a message, keeps the bytes that were stored (tus) or nothing
//! (the form endpoint), and the upload resumes byte-exact once space is freed.

use std::sync::Arc;

use ferry_testkit::disk::TinyDisk;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::{random_bytes, sha256_hex};

use crate::tus::{BIN, create, download, offset, patch};

const DISK: u64 = 4 << 20;
/// What the test writes beside ferry's files to leave it about 1 MiB.
const FILLER: usize = 3 << 20;

/// `ferry` on a fresh tiny disk, or `None` (with the reason printed) where the machine cannot
/// mount one.
async fn on_tiny_disk() -> Option<(Ferry, Arc<TinyDisk>)> {
    let disk = match TinyDisk::new(DISK) {
        Ok(disk) => Arc::new(disk),
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    let dir = disk.dir().display().to_string();
    let args = ["--data-dir", &dir, "--no-ui", "--fsync", "always"];
    let wrap = disk.clone();
    let ferry = Ferry::start_wrapped(BIN, args, Arc::new(move |c| wrap.wrap(c))).await;
    Some((ferry, disk))
}

#[tokio::test]
async fn a_full_disk_answers_507_keeps_the_stored_bytes_and_resumes_once_space_is_freed() {
    let Some((ferry, disk)) = on_tiny_disk().await else {
        return;
    };
    let filler = disk.path_for(ferry.pid(), "filler");
    std::fs::write(&filler, vec![0u8; FILLER]).expect("fill the disk");
    let client = reqwest::Client::new();
    let bytes = random_bytes(2 << 20);
    let url = create(&client, &ferry.base, bytes.len()).await;

    let res = patch(&client, &url, 0, bytes.clone()).await;
    assert_eq!(res.status(), 507);
    assert_eq!(
        res.text().await.expect("message"),
        "no space left on the server to store the upload\n"
    );
    let stored = offset(&client, &url).await.expect("HEAD after a full disk");
    assert!(stored < bytes.len() as u64, "stored {stored}");
    let id = url.rsplit('/').next().expect("id");
    let on_disk = std::fs::read(disk.path_for(ferry.pid(), format!("tus/{id}"))).expect("data");
    assert_eq!(
        on_disk.len() as u64,
        stored,
        "the offset counts what is on disk"
    );
    assert_eq!(
        on_disk,
        bytes[..stored as usize],
        "and those are the bytes sent"
    );

    std::fs::remove_file(&filler).expect("free the disk");
    let res = patch(&client, &url, stored, bytes[stored as usize..].to_vec()).await;
    assert_eq!(res.status(), 204);
    assert_eq!(offset(&client, &url).await, Ok(bytes.len() as u64));
    assert_eq!(
        sha256_hex(&download(&client, &url).await),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn a_full_disk_answers_507_on_the_form_endpoint_and_keeps_nothing() {
    let Some((ferry, disk)) = on_tiny_disk().await else {
        return;
    };
    let filler = disk.path_for(ferry.pid(), "filler");
    std::fs::write(&filler, vec![0u8; FILLER]).expect("fill the disk");
    let client = reqwest::Client::new();
    let res = client
        .post(format!("{}/upload/raw?name=big.bin", ferry.base))
        .body(random_bytes(2 << 20))
        .send()
        .await
        .expect("form answered");
    assert_eq!(res.status(), 507);
    let answer: serde_json::Value = res.json().await.expect("JSON answer");
    assert_eq!(
        answer,
        serde_json::json!({"message": "No space left on the server to store the file"})
    );
    let kept = std::fs::read_dir(disk.path_for(ferry.pid(), "form"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    assert_eq!(kept, 0, "a failed form upload leaves nothing behind");
}
