//! Where upload bytes live. A store knows nothing of HTTP: it creates uploads, appends bytes at
//! an offset, reports what it durably holds, and reads finished uploads back.
//!
//! [`Store`] is the small required part. Optional capabilities are separate traits that a store
//! exposes through the `as_*` accessors; the handler advertises and routes only those present.
//! [`conformance`] is the suite every store runs.

pub mod conformance;
pub mod fs;
#[cfg(feature = "s3")]
pub mod s3;

use std::path::PathBuf;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncRead;

use crate::id::UploadId;
use crate::protocol::Metadata;

/// A request body or any other byte source a store appends from: its chunks, in order, as they
/// arrive. Chunks rather than a reader, so a store can hand them to the disk or the network
/// without copying them first.
pub type BodyStream<'a> = &'a mut (dyn Stream<Item = std::io::Result<Bytes>> + Send + Unpin);

/// A finished upload's bytes, for downloads.
pub type UploadReader = Box<dyn AsyncRead + Send + Unpin>;

/// What a client asked for when creating an upload.
#[derive(Clone, Debug, Default)]
pub struct NewUpload {
    /// Total length, or `None` when deferred.
    pub length: Option<u64>,
    pub metadata: Metadata,
    /// A partial upload, to be concatenated into a final one later.
    pub partial: bool,
    /// An id chosen for the upload (by a pre-create hook) instead of a generated one; creation
    /// fails with [`StoreError::AlreadyExists`] when it is taken.
    pub id: Option<UploadId>,
    /// Where the bytes should be kept, relative to the store's root (a pre-create hook's
    /// `ChangeFileInfo.Storage`), already checked to be a relative path of safe segments.
    /// Stores that cannot place bytes freely ignore it; see each store.
    pub storage_key: Option<String>,
    /// The subject of the token it was created under (`--auth-secret`), if any.
    pub owner: Option<String>,
}

/// Where a store keeps an upload's bytes, as hooks report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A file on local disk, with its info file.
    File { data: PathBuf, info: PathBuf },
    /// An object in a bucket.
    Object { bucket: String, key: String },
}

/// How an upload takes part in concatenation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concat {
    Partial,
    /// Made from these partial uploads, in order.
    Final(Vec<UploadId>),
}

/// What the store knows about one upload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadInfo {
    pub id: UploadId,
    /// Bytes durably stored so far.
    pub offset: u64,
    /// Total length; `None` while deferred.
    pub length: Option<u64>,
    pub metadata: Metadata,
    /// Seconds since the Unix epoch.
    pub created_at: u64,
    /// Last time bytes or info changed, seconds since the Unix epoch; drives expiration.
    #[serde(default)]
    pub updated_at: u64,
    #[serde(default)]
    pub concat: Option<Concat>,
    /// A final upload created before all its parts finished (`concatenation-unfinished`): it
    /// holds no bytes and no length until the last part finishes and it is concatenated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Where the bytes are kept when a hook chose it (relative to the store's root); `None`
    /// for the store's own place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_key: Option<String>,
    /// The subject it belongs to when created under a token; only that subject reaches it.
    /// Kept server-side (never in the metadata clients see).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl UploadInfo {
    pub fn is_complete(&self) -> bool {
        self.length == Some(self.offset)
    }

    pub fn is_final(&self) -> bool {
        matches!(self.concat, Some(Concat::Final(_)))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("upload not found")]
    NotFound,
    #[error("offset {sent} does not match the stored offset {current}")]
    OffsetMismatch { sent: u64, current: u64 },
    /// Creation with a chosen id or storage key that another upload holds.
    #[error("the upload's id or storage key is already taken")]
    AlreadyExists,
    #[error("storage failure: {0}")]
    Io(#[from] std::io::Error),
    /// The storage service (S3) could not be reached, did not answer in time, or failed; the
    /// cause is for logs. Stores keep what they stored before, so the client may retry.
    #[error("storage service unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// The disk is full: ENOSPC, or the disk quota (EDQUOT).
    pub fn is_no_space(&self) -> bool {
        matches!(self, Self::Io(e) if matches!(
            e.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
        ))
    }
}

/// The required part of every store.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Creates an empty upload and returns its info.
    async fn create(&self, upload: NewUpload) -> Result<UploadInfo, StoreError>;

    /// Creates an upload as [`Store::create`] does, for a request that writes its first bytes
    /// next: the store may leave what makes the creation durable to that [`Store::write`], to be
    /// done together with the write's own syncs, or else to [`Store::settle`]. The caller
    /// settles before it names the upload to anyone (its answer, a hook).
    async fn create_unsettled(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        self.create(upload).await
    }

    /// Makes durable what [`Store::create_unsettled`] left of `id`'s creation, if anything.
    async fn settle(&self, id: &UploadId) -> Result<(), StoreError> {
        let _ = id;
        Ok(())
    }

    /// The upload's current info; `offset` counts only bytes really stored.
    async fn info(&self, id: &UploadId) -> Result<UploadInfo, StoreError>;

    /// Appends `body` at `offset` until it ends, and returns the new offset. The caller bounds
    /// `body` to the upload's remaining length. Bytes received before an error are kept when
    /// they were stored, so the client can resume from them.
    async fn write(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError>;

    /// Reads a finished upload from the start.
    async fn read(&self, id: &UploadId) -> Result<UploadReader, StoreError>;

    /// Where the upload's bytes are, for hooks; `None` when the store cannot say.
    fn location(&self, info: &UploadInfo) -> Option<Location> {
        let _ = info;
        None
    }

    /// The termination capability, if the store has it.
    fn as_terminate(&self) -> Option<&dyn Terminate> {
        None
    }

    /// The creation-defer-length capability, if the store has it.
    fn as_defer_length(&self) -> Option<&dyn DeferLength> {
        None
    }

    /// The concatenation capability, if the store has it.
    fn as_concatenate(&self) -> Option<&dyn Concatenate> {
        None
    }

    /// The concatenation-unfinished capability, if the store has it. Only used together with
    /// [`Store::as_concatenate`].
    fn as_concatenate_unfinished(&self) -> Option<&dyn ConcatenateUnfinished> {
        None
    }

    /// The expiration capability, if the store has it.
    fn as_expire(&self) -> Option<&dyn Expire> {
        None
    }

    /// Holding a chunk aside until it is accepted, which the checksum extension needs: a chunk
    /// counts only once its digest matched, even across a crash.
    fn as_stage(&self) -> Option<&dyn Stage> {
        None
    }
}

/// Capability: delete an upload and reclaim its storage (`termination`).
#[async_trait]
pub trait Terminate: Send + Sync {
    async fn terminate(&self, id: &UploadId) -> Result<(), StoreError>;
}

/// Capability: set the length of an upload created without one (`creation-defer-length`).
/// The caller checks that the length was unset and is not below the offset.
#[async_trait]
pub trait DeferLength: Send + Sync {
    async fn set_length(&self, id: &UploadId, length: u64) -> Result<UploadInfo, StoreError>;
}

/// Capability: build a final upload from finished partial uploads (`concatenation`). The caller
/// checks that every part is a finished partial upload.
#[async_trait]
pub trait Concatenate: Send + Sync {
    async fn concatenate(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError>;
}

/// Capability: create a final upload before its partial uploads are finished
/// (`concatenation-unfinished`) and concatenate it once they are. The pending final is
/// persisted (its info lists the part ids and `pending`), so a restart still completes it.
#[async_trait]
pub trait ConcatenateUnfinished: Send + Sync {
    /// Records a pending final upload of `parts`, with no bytes and no length yet. The caller
    /// checks that every part is a partial upload.
    async fn create_pending(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError>;

    /// Ids of the pending final uploads that name `part`.
    async fn pending_with(&self, part: &UploadId) -> Result<Vec<UploadId>, StoreError>;

    /// Concatenates the parts of the pending final upload `id` into it and clears `pending`;
    /// an upload no longer pending is returned as it is. The caller holds the final's lock and
    /// checks that every part is finished.
    async fn finish_pending(&self, id: &UploadId) -> Result<UploadInfo, StoreError>;
}

/// Capability: find unfinished uploads untouched since a moment, so a sweeper can terminate
/// them (`expiration`). A store with this capability must also have [`Terminate`].
#[async_trait]
pub trait Expire: Send + Sync {
    /// Ids of unfinished uploads whose `updated_at` is before `cutoff` (Unix seconds).
    async fn stale(&self, cutoff: u64) -> Result<Vec<UploadId>, StoreError>;
}

/// Capability: write a chunk aside and append it only once accepted (checksum). Until
/// [`Stage::commit`] the upload's offset does not move, so neither a failed check nor a crash
/// before the check leaves unverified bytes counted.
#[async_trait]
pub trait Stage: Send + Sync {
    /// Writes `body` aside for the upload, whose offset must be `offset`, and returns the bytes
    /// held; replaces anything staged before. Bytes received before the body failed are held,
    /// then the error is returned.
    async fn stage(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError>;

    /// Appends the staged bytes to the upload and returns its new offset.
    async fn commit(&self, id: &UploadId) -> Result<u64, StoreError>;

    /// Drops the staged bytes, if any.
    async fn discard(&self, id: &UploadId) -> Result<(), StoreError>;
}

/// Now, in whole seconds since the Unix epoch: the clock of `created_at`, `updated_at` and
/// expiry, for every store and the handler.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Infos already on disk or in a bucket (ids as plain strings) load and are written back
    /// byte for byte.
    #[test]
    fn stored_infos_keep_their_form() {
        let a = "0123456789abcdef0123456789abcdef";
        let b = "fedcba9876543210fedcba9876543210";
        let stored = format!(
            r#"{{"id":"{a}","offset":0,"length":null,"metadata":{{}},"created_at":1,"updated_at":2,"concat":{{"final":["{b}","{a}"]}},"pending":true}}"#
        );
        let info: UploadInfo = serde_json::from_str(&stored).expect("load");
        assert_eq!(info.id.as_str(), a);
        let parts = match &info.concat {
            Some(Concat::Final(parts)) => parts.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(parts, [b, a]);
        assert_eq!(serde_json::to_string(&info).expect("write"), stored);
        let foreign = stored.replace(b, "../../etc/passwd");
        assert!(serde_json::from_str::<UploadInfo>(&foreign).is_err());
    }
}
