//! Uploads in an S3-compatible bucket, mapped onto S3 multipart uploads.
//!
//! Each upload is one multipart upload of object `{prefix}{id}`. Its state lives in its own
//! object `{prefix}{id}.info` (the tus info plus the multipart upload id and the parts sent).
//! A PATCH may end on any byte but S3 parts (except the last) must be at least 5 MiB, so bytes
//! that do not fill a part are kept aside in `{prefix}{id}.tail` and prepended to the next PATCH;
//! a non-final part is never under the part size. The offset is the parts plus the tail recorded
//! in the info, which is rewritten only after the bytes it counts are stored, so a crash never
//! reports bytes S3 lacks. Memory per write is one part buffer, whatever the file size.
//! Concatenation lives in [`concat`].

mod client;
mod concat;
mod write;

use async_trait::async_trait;
use ferry_s3::S3Client;
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};
use tokio_util::io::StreamReader;

use super::{
    BodyStream, Concatenate, ConcatenateUnfinished, DeferLength, Expire, Location, NewUpload,
    Store, StoreError, Terminate, UploadInfo, UploadReader, now_secs,
};
use crate::id::UploadId;
use client::s3_error;

/// The smallest part S3 accepts, except for the last one.
pub const MIN_PART: usize = ferry_s3::MIN_PART as usize;

/// One part already sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Part {
    number: u16,
    etag: String,
    size: u64,
}

/// What `{id}.info` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    info: UploadInfo,
    upload_id: String,
    parts: Vec<Part>,
    /// Bytes of `{id}.tail` that belong to the upload (the object may hold more after a crash).
    tail: u64,
    /// The object is complete (multipart completed).
    done: bool,
}

impl State {
    fn offset(&self) -> u64 {
        self.parts.iter().map(|p| p.size).sum::<u64>() + self.tail
    }
}

/// A store on an S3-compatible bucket.
#[derive(Clone, Debug)]
pub struct S3Store {
    client: S3Client,
    prefix: String,
    part_size: usize,
}

impl S3Store {
    /// Uploads under `prefix` in `client`'s bucket, in parts of `part_size` bytes (at least
    /// [`MIN_PART`]; it bounds the memory of one write).
    pub fn new(client: S3Client, prefix: impl Into<String>, part_size: usize) -> Self {
        Self {
            client,
            prefix: prefix.into(),
            part_size: part_size.max(MIN_PART),
        }
    }

    fn key(&self, id: &UploadId, suffix: &str) -> String {
        format!("{}{id}{suffix}", self.prefix)
    }

    async fn load(&self, id: &UploadId) -> Result<State, StoreError> {
        let raw = self.client.get_bytes(&self.key(id, ".info")).await?;
        serde_json::from_slice(&raw).map_err(|e| s3_error("info", e))
    }

    async fn save(&self, id: &UploadId, state: &mut State) -> Result<(), StoreError> {
        state.info.offset = state.offset();
        state.info.updated_at = now_secs();
        let json = serde_json::to_vec(state).map_err(|e| s3_error("info", e))?;
        Ok(self.client.put(&self.key(id, ".info"), json).await?)
    }
}

#[async_trait]
impl Store for S3Store {
    async fn create(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        if let Some(key) = &upload.storage_key {
            // Objects stay at `{prefix}{id}`: placement by key is the fs store's alone.
            tracing::warn!(%key, "the s3 store ignores a hook's storage key");
        }
        let id = match upload.id {
            Some(id) => {
                // A chosen id must be free. Checked before creating (not atomic: two creations
                // racing for one chosen id could both pass; ids come from one hook receiver).
                match self.load(&id).await {
                    Ok(_) => return Err(StoreError::AlreadyExists),
                    Err(StoreError::NotFound) => id,
                    Err(e) => return Err(e),
                }
            }
            None => UploadId::generate(),
        };
        let upload_id = self
            .client
            .create_multipart(&self.key(&id, ""), &[])
            .await?;
        let mut state = State {
            info: UploadInfo {
                id: id.clone(),
                offset: 0,
                length: upload.length,
                metadata: upload.metadata,
                created_at: now_secs(),
                updated_at: now_secs(),
                concat: upload.partial.then_some(super::Concat::Partial),
                pending: false,
                storage_key: None,
                owner: upload.owner,
            },
            upload_id,
            parts: Vec::new(),
            tail: 0,
            done: false,
        };
        self.save(&id, &mut state).await?;
        if upload.length == Some(0) {
            self.finish(&id, &mut state, Vec::new()).await?;
        }
        Ok(state.info)
    }

    async fn info(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        Ok(self.load(id).await?.info)
    }

    async fn write(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError> {
        self.append(id, offset, body).await
    }

    fn location(&self, info: &UploadInfo) -> Option<Location> {
        Some(Location::Object {
            bucket: self.client.bucket().name().to_owned(),
            key: self.key(&info.id, ""),
        })
    }

    async fn read(&self, id: &UploadId) -> Result<UploadReader, StoreError> {
        let stream = self
            .client
            .get(&self.key(id, ""))
            .await?
            .map_err(std::io::Error::other);
        Ok(Box::new(StreamReader::new(stream)))
    }

    fn as_terminate(&self) -> Option<&dyn Terminate> {
        Some(self)
    }

    fn as_defer_length(&self) -> Option<&dyn DeferLength> {
        Some(self)
    }

    fn as_concatenate(&self) -> Option<&dyn Concatenate> {
        Some(self)
    }

    fn as_concatenate_unfinished(&self) -> Option<&dyn ConcatenateUnfinished> {
        Some(self)
    }

    fn as_expire(&self) -> Option<&dyn Expire> {
        Some(self)
    }
}

#[async_trait]
impl Terminate for S3Store {
    async fn terminate(&self, id: &UploadId) -> Result<(), StoreError> {
        let state = self.load(id).await?;
        // Info first: without it the upload no longer exists, whatever else fails.
        self.client.delete(&self.key(id, ".info")).await?;
        if !state.done {
            self.abort(id, &state.upload_id).await;
        }
        self.client.delete(&self.key(id, ".tail")).await?;
        if let (Some(super::Concat::Final(parts)), true) = (&state.info.concat, state.info.pending)
        {
            self.forget_pending(id, parts).await?;
        }
        Ok(self.client.delete(&self.key(id, "")).await?)
    }
}

#[async_trait]
impl DeferLength for S3Store {
    async fn set_length(&self, id: &UploadId, length: u64) -> Result<UploadInfo, StoreError> {
        let mut state = self.load(id).await?;
        state.info.length = Some(length);
        self.save(id, &mut state).await?;
        if state.offset() == length && !state.done {
            let tail = self.read_tail(id, &state).await?;
            self.finish(id, &mut state, tail).await?;
        }
        Ok(state.info)
    }
}

#[async_trait]
impl Expire for S3Store {
    async fn stale(&self, cutoff: u64) -> Result<Vec<UploadId>, StoreError> {
        let mut stale = Vec::new();
        for key in self.client.list_keys(&self.prefix).await? {
            let Some(id) = key
                .strip_prefix(self.prefix.as_str())
                .and_then(|k| k.strip_suffix(".info"))
                .and_then(UploadId::parse)
            else {
                continue;
            };
            match self.load(&id).await {
                Ok(s) if !s.info.is_complete() && s.info.updated_at < cutoff => stale.push(id),
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(stale)
    }
}
