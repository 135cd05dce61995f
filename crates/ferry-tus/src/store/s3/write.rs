//! Appending to an s3 upload: fill part-sized buffers from the body, send each full one as a
//! part, keep the rest as the tail object, and complete the multipart upload once the last
//! byte is in.

use tokio::io::AsyncReadExt;
use tokio_util::io::StreamReader;

use super::client::s3_error;
use super::{Part, S3Store, State};
use crate::id::UploadId;
use crate::store::{BodyStream, StoreError};

impl S3Store {
    pub(super) async fn append(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError> {
        // Parts are whole buffers anyway, so the chunks are read into them.
        let mut body = StreamReader::new(body);
        let mut state = self.load(id).await?;
        let current = state.offset();
        if current != offset {
            return Err(StoreError::OffsetMismatch {
                sent: offset,
                current,
            });
        }
        if state.done {
            return Ok(current);
        }
        let mut buf = self.read_tail(id, &state).await?;
        buf.reserve(self.part_size.saturating_sub(buf.len()));
        let mut failed = None;
        loop {
            let want = (self.part_size - buf.len()) as u64;
            // Bytes read before an error stay in `buf` and are kept below.
            let read = (&mut body).take(want).read_to_end(&mut buf).await;
            let full = buf.len() == self.part_size;
            let more_expected = state
                .info
                .length
                .is_none_or(|len| state.offset() - state.tail + (buf.len() as u64) < len);
            if full && more_expected && read.is_ok() {
                self.send_part(id, &mut state, std::mem::take(&mut buf))
                    .await?;
                continue;
            }
            if let Err(e) = read {
                failed = Some(e);
            }
            break;
        }
        let total = state.offset() - state.tail + buf.len() as u64;
        if state.info.length == Some(total) {
            self.finish(id, &mut state, buf).await?;
        } else if full_part(&buf, self.part_size) {
            self.send_part(id, &mut state, buf).await?;
        } else {
            state.tail = buf.len() as u64;
            if !buf.is_empty() {
                self.client.put(&self.key(id, ".tail"), buf).await?;
            }
            self.save(id, &mut state).await?;
        }
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(state.offset()),
        }
    }

    /// The tail bytes recorded in `state` (the object may be longer after a crash).
    pub(super) async fn read_tail(
        &self,
        id: &UploadId,
        state: &State,
    ) -> Result<Vec<u8>, StoreError> {
        if state.tail == 0 {
            return Ok(Vec::new());
        }
        let mut tail = self.client.get_bytes(&self.key(id, ".tail")).await?;
        if (tail.len() as u64) < state.tail {
            return Err(s3_error("tail", "shorter than recorded"));
        }
        tail.truncate(state.tail as usize);
        Ok(tail)
    }

    /// Sends `bytes` as the next part and records it (the tail is now inside it).
    async fn send_part(
        &self,
        id: &UploadId,
        state: &mut State,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        let number = u16::try_from(state.parts.len() + 1)
            .ok()
            .filter(|n| *n <= ferry_s3::MAX_PARTS)
            .ok_or_else(|| s3_error("part", "more than 10,000 parts"))?;
        let size = bytes.len() as u64;
        let etag = self
            .client
            .upload_part(&self.key(id, ""), &state.upload_id, number, size, bytes)
            .await?;
        state.parts.push(Part { number, etag, size });
        state.tail = 0;
        self.save(id, state).await
    }

    /// Sends the last bytes and completes the object. A 0-byte upload has no parts, which S3
    /// refuses to complete: it becomes an empty object and the multipart upload is aborted.
    /// If completing fails (S3 may say so inside a 200 answer), the state goes back to what it
    /// was before the last part, so the upload is neither done nor counted as whole: the
    /// client resends the last bytes and completion is tried again.
    pub(super) async fn finish(
        &self,
        id: &UploadId,
        state: &mut State,
        last: Vec<u8>,
    ) -> Result<(), StoreError> {
        let key = self.key(id, "");
        if state.parts.is_empty() && last.is_empty() {
            self.client.put(&key, Vec::new()).await?;
            self.abort(id, &state.upload_id).await;
        } else {
            let before = state.clone();
            if !last.is_empty() {
                self.send_part(id, state, last).await?;
            }
            let etags: Vec<(u16, String)> = state
                .parts
                .iter()
                .map(|p| (p.number, p.etag.clone()))
                .collect();
            if let Err(e) = self.client.complete(&key, &state.upload_id, &etags).await {
                *state = before;
                self.save(id, state).await?;
                return Err(e.into());
            }
        }
        state.done = true;
        state.tail = 0;
        self.save(id, state).await?;
        Ok(self.client.delete(&self.key(id, ".tail")).await?)
    }

    /// Best-effort abort of the multipart upload behind `id` (the parts would only cost space).
    pub(super) async fn abort(&self, id: &UploadId, upload_id: &str) {
        if let Err(e) = self.client.abort(&self.key(id, ""), upload_id).await {
            tracing::warn!(upload = %id, error = %e.detail(), "cannot abort multipart upload");
        }
    }
}

/// A buffer exactly one part long, which can go as a part even when more may follow.
fn full_part(buf: &[u8], part_size: usize) -> bool {
    buf.len() == part_size
}
