//! The `s3-multipart` destination: a multipart upload into the configured bucket (the S3
//! signing routes' settings and S3 calls, `crate::s3`), parts of max(size / 10,000, 5 MiB), up
//! to [`IN_FLIGHT`] of them uploading at once. Each part is held in memory while it uploads
//! (S3 needs its length), so memory stays at most `IN_FLIGHT + 1` parts. A resumed attempt keeps
//! the contiguous run of finished parts and re-reads the source from there; a failed attempt is
//! not retried; cancel aborts the upload.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use ferry_hooks::Storage;
use ferry_s3::{MAX_PARTS, MIN_PART, S3Client};
use serde_json::json;
use tokio::task::JoinSet;

use super::destination::Destination;
use super::request::UploadBody;
use super::{Done, Transfer, TransferError};
use crate::error::CompanionError;
use crate::s3::{S3State, key};
use crate::state::AppState;

/// Parts uploading at once.
pub const IN_FLIGHT: usize = 3;

/// One S3 multipart upload being driven.
#[derive(Debug)]
pub struct S3Destination {
    s3: S3State,
    key: Option<String>,
    upload_id: Option<String>,
    part_size: u64,
    /// Finished parts: (number, etag, size). Shared with the part tasks, so a part that finished
    /// just before a pause is kept even though the attempt is dropped.
    parts: Arc<Mutex<Vec<(u16, String, u64)>>>,
    /// Taken over from another instance: the finished parts are asked of the store first.
    relist: bool,
}

/// Checkpoint hints: the multipart upload another instance continues.
const KEY_HINT: &str = "s3_key";
const UPLOAD_ID_HINT: &str = "s3_upload_id";

impl S3Destination {
    /// The configured bucket; the body has no field of its own for this protocol.
    pub fn parse(
        state: &AppState,
        _body: &UploadBody,
        _endpoint: Option<url::Url>,
    ) -> Result<Box<dyn Destination>, CompanionError> {
        let s3 = state.config().s3.clone().ok_or_else(|| {
            CompanionError::BadRequest(
                "s3-multipart transfers are not available on this server".into(),
            )
        })?;
        Ok(Box::new(Self {
            s3,
            key: None,
            upload_id: None,
            part_size: 0,
            parts: Arc::default(),
            relist: false,
        }))
    }

    async fn collect(
        &mut self,
        running: &mut JoinSet<Result<(), TransferError>>,
    ) -> Result<(), TransferError> {
        match running.join_next().await {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(fail))) => Err(fail),
            Some(Err(e)) => Err(TransferError::Retryable(format!("part task: {e}"))),
            None => Ok(()),
        }
    }

    /// Keeps parts 1..=n without gaps (later ones are uploaded again); returns their byte
    /// count and n.
    fn keep_contiguous_parts(&mut self) -> (u64, usize) {
        let mut parts = lock(&self.parts);
        parts.sort_by_key(|p| p.0);
        let n = parts
            .iter()
            .enumerate()
            .take_while(|(i, p)| usize::from(p.0) == i + 1)
            .count();
        parts.truncate(n);
        (parts.iter().map(|p| p.2).sum(), n)
    }
}

#[async_trait::async_trait]
impl Destination for S3Destination {
    /// One attempt from the end of the finished parts to the end of the source.
    async fn attempt(&mut self, transfer: &Transfer) -> Result<Done, TransferError> {
        // Every call of the transfer goes through its egress client (one client, one policy).
        let s3 = self.s3.client.clone().with_http(transfer.client().clone());
        if self.relist
            && let (Some(key), Some(id)) = (&self.key, &self.upload_id)
        {
            let listed = s3.list_parts(key, id).await.map_err(s3_fail)?;
            *lock(&self.parts) = listed
                .into_iter()
                .map(|p| (p.number, p.etag, p.size))
                .collect();
            self.relist = false;
        }
        let (offset, finished) = self.keep_contiguous_parts();
        let feeder = transfer.open(offset).await?;
        transfer.progress.set_total(feeder.total());
        if self.part_size == 0 {
            self.part_size = feeder
                .total()
                .map_or(MIN_PART, |t| t.div_ceil(u64::from(MAX_PARTS)).max(MIN_PART));
        }
        if self.upload_id.is_none() {
            let key = key::new_key(&self.s3.settings, None, &transfer.file_name());
            let mut headers = Vec::new();
            if let Some(kind) = transfer.metadata.get("type") {
                headers.push(("content-type".to_owned(), kind.clone()));
            }
            let id = s3.create_multipart(&key, &headers).await.map_err(s3_fail)?;
            // Another instance taking this transfer over continues this multipart upload.
            transfer.remember(KEY_HINT, &key);
            transfer.remember(UPLOAD_ID_HINT, &id);
            self.key = Some(key);
            self.upload_id = Some(id);
        }
        let (Some(key), Some(upload_id)) = (self.key.clone(), self.upload_id.clone()) else {
            return Err(TransferError::Fatal("upload failed".into()));
        };
        let mut number = u16::try_from(finished + 1)
            .map_err(|_| TransferError::Fatal("upload failed: too many parts".into()))?;
        let mut running: JoinSet<Result<(), TransferError>> = JoinSet::new();
        loop {
            let mut buf = BytesMut::new();
            while (buf.len() as u64) < self.part_size {
                match feeder.next(self.part_size - buf.len() as u64).await? {
                    Some(chunk) => buf.extend_from_slice(&chunk),
                    None => break,
                }
            }
            let last = buf.is_empty() || (buf.len() as u64) < self.part_size;
            if !buf.is_empty() || number == 1 {
                if running.len() >= IN_FLIGHT {
                    self.collect(&mut running).await?;
                }
                let part = put_part(
                    s3.clone(),
                    key.clone(),
                    upload_id.clone(),
                    number,
                    buf.freeze(),
                );
                let done = self.parts.clone();
                running.spawn(async move {
                    let finished = part.await?;
                    lock(&done).push(finished);
                    Ok(())
                });
                number = number
                    .checked_add(1)
                    .ok_or_else(|| TransferError::Fatal("upload failed: too many parts".into()))?;
            }
            if last {
                break;
            }
        }
        while !running.is_empty() {
            self.collect(&mut running).await?;
        }
        let list: Vec<(u16, String)> = {
            let mut parts = lock(&self.parts);
            parts.sort_by_key(|p| p.0);
            parts.iter().map(|p| (p.0, p.1.clone())).collect()
        };
        let location = s3
            .complete(&key, &upload_id, &list)
            .await
            .map_err(s3_fail)?;
        let answer = json!({ "location": location, "key": key, "bucket": self.s3.bucket_name() });
        Ok(Done {
            url: location,
            response: Some(
                json!({ "responseText": answer.to_string(), "status": 200, "headers": {} }),
            ),
        })
    }

    /// The object in the configured bucket (tusd's s3store keys), and its URL.
    fn storage(&self, done: &Done) -> Storage {
        Storage::s3store(
            self.s3.bucket_name(),
            self.key.as_deref().unwrap_or_default(),
        )
        .with("URL", done.url.as_str())
    }

    fn restore(&mut self, hints: &crate::jobs::Hints) {
        if let (Some(key), Some(id)) = (hints.get(KEY_HINT), hints.get(UPLOAD_ID_HINT)) {
            self.key = Some(key.clone());
            self.upload_id = Some(id.clone());
            self.relist = true;
        }
    }

    /// Best-effort abort.
    async fn cancel(&mut self, transfer: &Transfer) {
        if let (Some(key), Some(id)) = (&self.key, &self.upload_id) {
            let s3 = self.s3.client.clone().with_http(transfer.client().clone());
            if let Err(e) = s3.abort(key, id).await {
                tracing::info!(error = %e.detail(), "S3 abort failed");
            }
        }
    }
}

/// Uploads one part through `client` (the transfer's egress client, so part traffic follows the
/// same policy as the rest of the transfer).
async fn put_part(
    client: S3Client,
    key: String,
    upload_id: String,
    number: u16,
    bytes: Bytes,
) -> Result<(u16, String, u64), TransferError> {
    let size = bytes.len() as u64;
    match client
        .upload_part(&key, &upload_id, number, size, bytes)
        .await
    {
        Ok(etag) => Ok((number, etag, size)),
        // The store refused the part itself: sending it again would not help.
        Err(ferry_s3::S3Error::Client { status, .. }) => Err(TransferError::Fatal(format!(
            "upload failed: S3 part {number} answered {status}"
        ))),
        Err(e) => Err(TransferError::Retryable(format!(
            "S3 part {number}: {}",
            e.detail()
        ))),
    }
}

fn lock(
    parts: &Mutex<Vec<(u16, String, u64)>>,
) -> std::sync::MutexGuard<'_, Vec<(u16, String, u64)>> {
    // The list stays consistent even if a holder panicked: recover it.
    parts.lock().unwrap_or_else(|p| p.into_inner())
}

fn s3_fail(e: ferry_s3::S3Error) -> TransferError {
    tracing::info!(error = %e.detail(), "S3 call failed");
    TransferError::Retryable(format!("upload failed: {e}"))
}
