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
use futures_util::TryStreamExt;
use reqwest::Method;
use rusty_s3::actions::CreateMultipartUpload;
use rusty_s3::{Bucket, Credentials, UrlStyle};
use serde::{Deserialize, Serialize};
use tokio_util::io::StreamReader;

use super::{
    BodyStream, Concatenate, ConcatenateUnfinished, DeferLength, Expire, NewUpload, Store,
    StoreError, Terminate, UploadInfo, UploadReader,
};
use crate::id::UploadId;
use client::{Client, s3_error};

/// The smallest part S3 accepts, except for the last one.
pub const MIN_PART: usize = 5 * 1024 * 1024;

/// How to reach the bucket.
#[derive(Clone)]
pub struct S3Config {
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    /// Never logged.
    pub secret_key: String,
    /// `endpoint/bucket/key` URLs instead of `bucket.endpoint/key`.
    pub force_path_style: bool,
    /// Prefix of every object key.
    pub prefix: String,
    /// Bytes per part; at least [`MIN_PART`]. Bounds the memory of one write.
    pub part_size: usize,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field("force_path_style", &self.force_path_style)
            .field("prefix", &self.prefix)
            .field("part_size", &self.part_size)
            .finish()
    }
}

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
    client: Client,
    prefix: String,
    part_size: usize,
}

impl S3Store {
    pub fn new(config: S3Config) -> Result<Self, StoreError> {
        let endpoint = config
            .endpoint
            .parse()
            .map_err(|e| s3_error("endpoint", e))?;
        let style = if config.force_path_style {
            UrlStyle::Path
        } else {
            UrlStyle::VirtualHost
        };
        let bucket = Bucket::new(endpoint, style, config.bucket, config.region)
            .map_err(|e| s3_error("bucket", e))?;
        Ok(Self {
            client: Client {
                bucket,
                creds: Credentials::new(config.access_key, config.secret_key),
                http: reqwest::Client::new(),
            },
            prefix: config.prefix,
            part_size: config.part_size.max(MIN_PART),
        })
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
        self.client.put_bytes(&self.key(id, ".info"), json).await
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[async_trait]
impl Store for S3Store {
    async fn create(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        let id = UploadId::generate();
        let key = self.key(&id, "");
        let action = self
            .client
            .bucket
            .create_multipart_upload(Some(&self.client.creds), &key);
        let res = self
            .client
            .send("create multipart", Method::POST, &action, None)
            .await?;
        let body = res
            .text()
            .await
            .map_err(|e| s3_error("create multipart", e))?;
        let created = CreateMultipartUpload::parse_response(&body)
            .map_err(|e| s3_error("create multipart", e))?;
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
            },
            upload_id: created.upload_id().to_owned(),
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

    async fn read(&self, id: &UploadId) -> Result<UploadReader, StoreError> {
        let key = self.key(id, "");
        let action = self
            .client
            .bucket
            .get_object(Some(&self.client.creds), &key);
        let res = self.client.send("get", Method::GET, &action, None).await?;
        let stream = res.bytes_stream().map_err(std::io::Error::other);
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
            let key = self.key(id, "");
            let abort = self.client.bucket.abort_multipart_upload(
                Some(&self.client.creds),
                &key,
                &state.upload_id,
            );
            if let Err(e) = self
                .client
                .send("abort", Method::DELETE, &abort, None)
                .await
            {
                tracing::warn!(upload = %id, error = %e, "cannot abort multipart upload");
            }
        }
        self.client.delete(&self.key(id, ".tail")).await?;
        if let (Some(super::Concat::Final(parts)), true) = (&state.info.concat, state.info.pending)
        {
            self.forget_pending(id, parts).await?;
        }
        self.client.delete(&self.key(id, "")).await
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
