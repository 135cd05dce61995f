//! The store conformance suite: the behaviour every [`Store`] must have, run by each store's
//! tests (the fs store in `tests/behaviour/conformance.rs`, the s3 store against a real bucket
//! in `tests/store_s3.rs`). Capabilities a store
//! lacks are skipped, so the suite also documents what each `as_*` accessor promises.
//!
//! Failures are returned as text rather than panics so the suite can live in the library.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::stream;
use rand::RngCore;
use tokio::io::AsyncReadExt;

use super::{Concat, NewUpload, Store, StoreError, UploadInfo};
use crate::id::UploadId;
use crate::protocol::Metadata;

macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err(format!($($why)+));
        }
    };
}

/// Runs every case against `store`; the first failure is returned with its case name.
pub async fn run(store: &dyn Store) -> Result<(), String> {
    macro_rules! cases {
        ($($case:ident),+) => {$(
            $case(store).await.map_err(|e| format!("{}: {e}", stringify!($case)))?;
        )+};
    }
    cases!(
        create_and_write,
        rejects_wrong_offset,
        zero_length,
        interrupted_write_resumes,
        unknown_ids,
        defer_length,
        terminate,
        concatenate,
        concatenate_unfinished,
        expire,
        stage
    );
    Ok(())
}

fn random(len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

async fn write(store: &dyn Store, id: &UploadId, offset: u64, bytes: &[u8]) -> Result<u64, String> {
    store
        .write(id, offset, &mut body_of(bytes))
        .await
        .map_err(|e| format!("write at {offset}: {e}"))
}

/// A body of `bytes` in chunks of odd sizes, as a network delivers them (also for stores' own
/// tests).
pub fn body_of(bytes: &[u8]) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Unpin {
    let chunks: Vec<_> = bytes
        .chunks(65_537)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    stream::iter(chunks)
}

async fn read_all(store: &dyn Store, id: &UploadId) -> Result<Vec<u8>, String> {
    let mut reader = store.read(id).await.map_err(|e| format!("read: {e}"))?;
    let mut out = Vec::new();
    reader
        .read_to_end(&mut out)
        .await
        .map_err(|e| format!("read: {e}"))?;
    Ok(out)
}

async fn new_upload(
    store: &dyn Store,
    length: Option<u64>,
    partial: bool,
) -> Result<UploadId, String> {
    let info = store
        .create(NewUpload {
            length,
            metadata: Metadata::default(),
            partial,
            ..NewUpload::default()
        })
        .await
        .map_err(|e| format!("create: {e}"))?;
    Ok(info.id)
}

/// Several writes of odd sizes (one over 5 MiB, so an S3 store must split parts) then a
/// byte-exact read.
async fn create_and_write(store: &dyn Store) -> Result<(), String> {
    let bytes = random(6 * 1024 * 1024 + 4099);
    let metadata = Metadata::parse("filename YS5iaW4=,flag").map_err(|e| e.to_string())?;
    let info = store
        .create(NewUpload {
            length: Some(bytes.len() as u64),
            metadata: metadata.clone(),
            partial: false,
            ..NewUpload::default()
        })
        .await
        .map_err(|e| format!("create: {e}"))?;
    ensure!(
        info.offset == 0 && info.length == Some(bytes.len() as u64),
        "fresh info {info:?}"
    );
    let id = info.id;
    let stored = store.info(&id).await.map_err(|e| e.to_string())?;
    ensure!(
        stored.metadata == metadata,
        "metadata changed: {:?}",
        stored.metadata
    );
    let cuts = [0, 1, 700_001, 6 * 1024 * 1024 + 1, bytes.len()];
    for pair in cuts.windows(2) {
        let at = write(store, &id, pair[0] as u64, &bytes[pair[0]..pair[1]]).await?;
        ensure!(
            at == pair[1] as u64,
            "write returned {at}, want {}",
            pair[1]
        );
        let info = store.info(&id).await.map_err(|e| e.to_string())?;
        ensure!(
            info.offset == pair[1] as u64,
            "info offset {} want {}",
            info.offset,
            pair[1]
        );
    }
    ensure!(
        store
            .info(&id)
            .await
            .map_err(|e| e.to_string())?
            .is_complete(),
        "not complete"
    );
    ensure!(read_all(store, &id).await? == bytes, "stored bytes differ");
    Ok(())
}

async fn rejects_wrong_offset(store: &dyn Store) -> Result<(), String> {
    let id = new_upload(store, Some(10), false).await?;
    write(store, &id, 0, b"abcd").await?;
    match store.write(&id, 3, &mut body_of(b"xyz")).await {
        Err(StoreError::OffsetMismatch {
            sent: 3,
            current: 4,
        }) => {}
        other => return Err(format!("write at a wrong offset gave {other:?}")),
    }
    let info = store.info(&id).await.map_err(|e| e.to_string())?;
    ensure!(info.offset == 4, "offset moved to {}", info.offset);
    Ok(())
}

async fn zero_length(store: &dyn Store) -> Result<(), String> {
    let id = new_upload(store, Some(0), false).await?;
    let info = store.info(&id).await.map_err(|e| e.to_string())?;
    ensure!(info.is_complete(), "0-byte upload not complete: {info:?}");
    ensure!(
        read_all(store, &id).await?.is_empty(),
        "0-byte upload has bytes"
    );
    Ok(())
}

/// Yields `good` bytes, then fails like a dropped connection.
fn failing(good: &[u8]) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Unpin {
    let dropped = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "dropped");
    futures_util::StreamExt::chain(body_of(good), stream::iter([Err(dropped)]))
}

/// The crash-resume contract at store level: bytes received before a body failed are kept (all
/// or a prefix), the reported offset counts only stored bytes, and resuming from it is exact.
async fn interrupted_write_resumes(store: &dyn Store) -> Result<(), String> {
    let bytes = random(300_000);
    let id = new_upload(store, Some(bytes.len() as u64), false).await?;
    ensure!(
        store
            .write(&id, 0, &mut failing(&bytes[..200_000]))
            .await
            .is_err(),
        "a failed body reported success"
    );
    let kept = store.info(&id).await.map_err(|e| e.to_string())?.offset;
    ensure!(kept <= 200_000, "offset {kept} counts bytes never sent");
    write(store, &id, kept, &bytes[kept as usize..]).await?;
    ensure!(read_all(store, &id).await? == bytes, "resumed bytes differ");
    Ok(())
}

async fn unknown_ids(store: &dyn Store) -> Result<(), String> {
    let id = UploadId::generate();
    ensure!(
        matches!(store.info(&id).await, Err(StoreError::NotFound)),
        "info of unknown id"
    );
    ensure!(
        matches!(store.read(&id).await, Err(StoreError::NotFound)),
        "read of unknown id"
    );
    Ok(())
}

async fn defer_length(store: &dyn Store) -> Result<(), String> {
    let Some(defer) = store.as_defer_length() else {
        return Ok(());
    };
    let id = new_upload(store, None, false).await?;
    write(store, &id, 0, b"hello").await?;
    let info = store.info(&id).await.map_err(|e| e.to_string())?;
    ensure!(
        info.length.is_none() && info.offset == 5,
        "deferred info {info:?}"
    );
    let info = defer.set_length(&id, 8).await.map_err(|e| e.to_string())?;
    ensure!(
        info.length == Some(8) && info.offset == 5,
        "after set_length {info:?}"
    );
    write(store, &id, 5, b"!!!").await?;
    ensure!(
        read_all(store, &id).await? == b"hello!!!",
        "deferred bytes differ"
    );
    Ok(())
}

async fn terminate(store: &dyn Store) -> Result<(), String> {
    let Some(terminate) = store.as_terminate() else {
        return Ok(());
    };
    let id = new_upload(store, Some(10), false).await?;
    write(store, &id, 0, b"abc").await?;
    terminate.terminate(&id).await.map_err(|e| e.to_string())?;
    ensure!(
        matches!(store.info(&id).await, Err(StoreError::NotFound)),
        "terminated upload still there"
    );
    ensure!(
        matches!(terminate.terminate(&id).await, Err(StoreError::NotFound)),
        "second terminate"
    );
    Ok(())
}

async fn concatenate(store: &dyn Store) -> Result<(), String> {
    let Some(concat) = store.as_concatenate() else {
        return Ok(());
    };
    let parts = [random(5 * 1024 * 1024 + 17), random(1), random(70_000)];
    let mut ids = Vec::new();
    for part in &parts {
        let id = new_upload(store, Some(part.len() as u64), true).await?;
        write(store, &id, 0, part).await?;
        let info = store.info(&id).await.map_err(|e| e.to_string())?;
        ensure!(
            info.concat == Some(Concat::Partial),
            "partial not marked: {info:?}"
        );
        ids.push(id);
    }
    let info = concat
        .concatenate(&ids, Metadata::default(), None)
        .await
        .map_err(|e| e.to_string())?;
    ensure!(info.is_final() && info.is_complete(), "final info {info:?}");
    let id = info.id;
    ensure!(
        read_all(store, &id).await? == parts.concat(),
        "final bytes differ"
    );
    Ok(())
}

async fn concatenate_unfinished(store: &dyn Store) -> Result<(), String> {
    let Some(unfinished) = store.as_concatenate_unfinished() else {
        return Ok(());
    };
    let parts = [random(70_001), random(3)];
    let mut ids = Vec::new();
    for part in &parts {
        ids.push(new_upload(store, Some(part.len() as u64), true).await?);
    }
    write(store, &ids[0], 0, &parts[0]).await?;
    let info = unfinished
        .create_pending(&ids, Metadata::default(), None)
        .await
        .map_err(|e| e.to_string())?;
    let id = info.id;
    let stored = store.info(&id).await.map_err(|e| e.to_string())?;
    ensure!(
        stored.pending && stored.is_final() && !stored.is_complete(),
        "pending info {stored:?}"
    );
    let waiting = unfinished
        .pending_with(&ids[1])
        .await
        .map_err(|e| e.to_string())?;
    ensure!(waiting == [id.clone()], "pending_with {waiting:?}");
    write(store, &ids[1], 0, &parts[1]).await?;
    let done = unfinished
        .finish_pending(&id)
        .await
        .map_err(|e| e.to_string())?;
    ensure!(
        !done.pending && done.is_complete() && done.length == Some(70_004),
        "finished info {done:?}"
    );
    ensure!(
        read_all(store, &id).await? == parts.concat(),
        "final bytes differ"
    );
    let waiting = unfinished
        .pending_with(&ids[1])
        .await
        .map_err(|e| e.to_string())?;
    ensure!(waiting.is_empty(), "still pending {waiting:?}");
    Ok(())
}

async fn expire(store: &dyn Store) -> Result<(), String> {
    let Some(expire) = store.as_expire() else {
        return Ok(());
    };
    let unfinished = new_upload(store, Some(4), false).await?;
    let finished = new_upload(store, Some(2), false).await?;
    write(store, &finished, 0, b"ok").await?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let stale = expire.stale(now + 10).await.map_err(|e| e.to_string())?;
    ensure!(stale.contains(&unfinished), "unfinished upload not stale");
    ensure!(!stale.contains(&finished), "finished upload called stale");
    let stale = expire
        .stale(now.saturating_sub(3600))
        .await
        .map_err(|e| e.to_string())?;
    ensure!(!stale.contains(&unfinished), "fresh upload called stale");
    Ok(())
}

async fn stage(store: &dyn Store) -> Result<(), String> {
    let Some(stage) = store.as_stage() else {
        return Ok(());
    };
    let offset = |info: Result<UploadInfo, StoreError>| info.map(|i| i.offset);
    let id = new_upload(store, Some(10), false).await?;
    write(store, &id, 0, b"0123").await?;
    match stage.stage(&id, 3, &mut body_of(b"x")).await {
        Err(StoreError::OffsetMismatch {
            sent: 3,
            current: 4,
        }) => {}
        other => return Err(format!("staging at a wrong offset gave {other:?}")),
    }
    let held = stage.stage(&id, 4, &mut body_of(b"bad!")).await;
    ensure!(matches!(held, Ok(4)), "staged {held:?}");
    ensure!(
        offset(store.info(&id).await).ok() == Some(4),
        "staged bytes counted before the commit"
    );
    stage.discard(&id).await.map_err(|e| e.to_string())?;
    // A failed body holds its prefix until discarded; a new stage replaces it.
    ensure!(
        stage.stage(&id, 4, &mut failing(b"ab")).await.is_err(),
        "a failed body staged without error"
    );
    let held = stage.stage(&id, 4, &mut body_of(b"456789")).await;
    ensure!(matches!(held, Ok(6)), "staged {held:?}");
    let committed = stage.commit(&id).await.map_err(|e| e.to_string())?;
    ensure!(committed == 10, "commit reached {committed}");
    ensure!(
        read_all(store, &id).await? == b"0123456789",
        "bytes after commit differ"
    );
    Ok(())
}
