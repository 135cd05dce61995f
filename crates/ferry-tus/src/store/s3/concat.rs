//! Concatenation on the s3 store: a final upload is a multipart upload fed with the bytes of its
//! finished partial uploads, in order, through the ordinary append path.
//!
//! The bytes pass through the server rather than being copied inside S3 (`UploadPartCopy`):
//! parts of a multipart upload other than the last must be at least 5 MiB, and partial uploads
//! are often smaller, so a server-side copy would still need this path for them. Memory stays
//! at one part buffer, as for any write.
//!
//! A final upload created at once says it is final only once every byte is in; a crash before
//! leaves an unfinished ordinary upload nobody was told about, which the expiration sweeper
//! reclaims. A pending final (`concatenation-unfinished`) is recorded in its info and by an empty
//! marker object `{part}.finals/{final}` per part, so finding the finals that wait for a part is
//! one narrow listing, not a scan of the bucket. Finishing it resumes from the bytes already
//! fed, so a crash midway loses nothing.

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::{Stream, StreamExt, future};
use tokio_util::io::ReaderStream;

use super::S3Store;
use super::client::s3_error;
use crate::id::UploadId;
use crate::protocol::Metadata;
use crate::store::{
    Concat, Concatenate, ConcatenateUnfinished, DeferLength, NewUpload, Store, StoreError,
    UploadInfo,
};

impl S3Store {
    /// The lengths of `parts`, which must all be finished.
    async fn part_lengths(&self, parts: &[UploadId]) -> Result<Vec<u64>, StoreError> {
        let mut lengths = Vec::with_capacity(parts.len());
        for part in parts {
            let state = self.load(part).await?;
            if !state.done {
                return Err(s3_error("concatenate", "a part is unfinished"));
            }
            lengths.push(state.offset());
        }
        Ok(lengths)
    }

    /// Appends the concatenation of `parts` to upload `id`, from its byte `from` on (the bytes
    /// before were fed by an earlier attempt).
    async fn feed(
        &self,
        id: &UploadId,
        parts: &[UploadId],
        lengths: &[u64],
        from: u64,
    ) -> Result<u64, StoreError> {
        let (mut offset, mut skip) = (from, from);
        for (part, &length) in parts.iter().zip(lengths) {
            if skip >= length {
                skip -= length;
                continue;
            }
            let mut bytes = without_first(ReaderStream::new(self.read(part).await?), skip);
            skip = 0;
            offset = self.append(id, offset, &mut bytes).await?;
        }
        Ok(offset)
    }

    fn marker(&self, part: &UploadId, final_id: &UploadId) -> String {
        self.key(part, &format!(".finals/{final_id}"))
    }

    /// Removes the markers of a pending final (finished or terminated).
    pub(super) async fn forget_pending(
        &self,
        id: &UploadId,
        parts: &[UploadId],
    ) -> Result<(), StoreError> {
        for part in parts {
            self.client.delete(&self.marker(part, id)).await?;
        }
        Ok(())
    }
}

/// `stream` without its first `skip` bytes.
fn without_first(
    stream: impl Stream<Item = std::io::Result<Bytes>> + Send + Unpin,
    mut skip: u64,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + Unpin {
    stream.filter_map(move |chunk| {
        let kept = match chunk {
            Ok(mut bytes) if skip > 0 => {
                let cut = usize::try_from(skip).unwrap_or(usize::MAX).min(bytes.len());
                skip -= cut as u64;
                let rest = bytes.split_off(cut);
                (!rest.is_empty()).then_some(Ok(rest))
            }
            other => Some(other),
        };
        future::ready(kept)
    })
}

fn final_of(parts: &[UploadId]) -> Option<Concat> {
    Some(Concat::Final(parts.to_vec()))
}

#[async_trait]
impl Concatenate for S3Store {
    async fn concatenate(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError> {
        let lengths = self.part_lengths(parts).await?;
        let length = lengths.iter().sum();
        let created = self
            .create(NewUpload {
                length: Some(length),
                metadata,
                partial: false,
                owner,
                ..NewUpload::default()
            })
            .await?;
        let id = created.id;
        self.feed(&id, parts, &lengths, 0).await?;
        let mut state = self.load(&id).await?;
        if !state.done || state.offset() != length {
            return Err(s3_error("concatenate", "parts changed while copied"));
        }
        state.info.concat = final_of(parts);
        self.save(&id, &mut state).await?;
        Ok(state.info)
    }
}

#[async_trait]
impl ConcatenateUnfinished for S3Store {
    async fn create_pending(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError> {
        let created = self
            .create(NewUpload {
                length: None,
                metadata,
                partial: false,
                owner,
                ..NewUpload::default()
            })
            .await?;
        let id = created.id;
        // Markers first: one left by a crash names an ordinary upload, which is skipped.
        for part in parts {
            self.client.put(&self.marker(part, &id), Vec::new()).await?;
        }
        let mut state = self.load(&id).await?;
        state.info.concat = final_of(parts);
        state.info.pending = true;
        self.save(&id, &mut state).await?;
        Ok(state.info)
    }

    async fn pending_with(&self, part: &UploadId) -> Result<Vec<UploadId>, StoreError> {
        let markers = self.key(part, ".finals/");
        let mut found = Vec::new();
        for key in self.client.list_keys(&markers).await? {
            let Some(id) = key.strip_prefix(&markers).and_then(UploadId::parse) else {
                continue;
            };
            match self.load(&id).await {
                Ok(state)
                    if state.info.pending
                        && matches!(&state.info.concat, Some(Concat::Final(parts))
                            if parts.contains(part)) =>
                {
                    found.push(id)
                }
                // Terminated, finished, or a crash before the info said pending.
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }

    async fn finish_pending(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        let state = self.load(id).await?;
        let parts = match (&state.info.concat, state.info.pending) {
            (Some(Concat::Final(parts)), true) => parts.clone(),
            _ => return Ok(state.info),
        };
        let lengths = self.part_lengths(&parts).await?;
        let length: u64 = lengths.iter().sum();
        if state.info.length.is_none() {
            // Also completes a final of empty parts, which has nothing to feed.
            self.set_length(id, length).await?;
        }
        let state = self.load(id).await?;
        if !state.done {
            self.feed(id, &parts, &lengths, state.offset()).await?;
        }
        let mut state = self.load(id).await?;
        if !state.done || state.offset() != length {
            return Err(s3_error("concatenate", "parts changed while copied"));
        }
        state.info.pending = false;
        self.save(id, &mut state).await?;
        self.forget_pending(id, &parts).await?;
        Ok(state.info)
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;

    use super::*;

    async fn collect(skip: u64) -> Vec<u8> {
        let chunks = [&b"abc"[..], b"", b"defg", b"h"].map(|c| Ok(Bytes::from_static(c)));
        let mut out = Vec::new();
        let mut rest = without_first(stream::iter(chunks), skip);
        while let Some(chunk) = rest.next().await {
            out.extend_from_slice(&chunk.expect("chunk"));
        }
        out
    }

    #[tokio::test]
    async fn skipping_resumes_at_any_byte() {
        let all = b"abcdefgh";
        for skip in 0..=9u64 {
            let want = &all[usize::try_from(skip).expect("small").min(all.len())..];
            assert_eq!(collect(skip).await, want, "skip {skip}");
        }
    }
}
