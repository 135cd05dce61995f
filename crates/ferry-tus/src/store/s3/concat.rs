//! Concatenation on the s3 store: a final upload is a new multipart upload fed with the bytes of
//! its finished partial uploads, in order, through the ordinary append path.
//!
//! The bytes pass through the server rather than being copied inside S3 (`UploadPartCopy`):
//! parts of a multipart upload other than the last must be at least 5 MiB, and partial uploads
//! are often smaller, so a server-side copy would still need this path for them. Memory stays
//! at one part buffer, as for any write.
//!
//! The final upload's info says it is final only once every byte is in. A crash before that
//! leaves an unfinished ordinary upload nobody was told about, which the expiration sweeper
//! reclaims.

use async_trait::async_trait;
use tokio_util::io::ReaderStream;

use super::S3Store;
use super::client::s3_error;
use crate::id::UploadId;
use crate::protocol::Metadata;
use crate::store::{Concat, Concatenate, NewUpload, Store, StoreError, UploadInfo};

#[async_trait]
impl Concatenate for S3Store {
    async fn concatenate(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
    ) -> Result<UploadInfo, StoreError> {
        let mut length = 0u64;
        for part in parts {
            let state = self.load(part).await?;
            if !state.done {
                return Err(s3_error("concatenate", "a part is unfinished"));
            }
            length += state.offset();
        }
        let created = self
            .create(NewUpload {
                length: Some(length),
                metadata,
                partial: false,
            })
            .await?;
        let id = UploadId::parse(&created.id).ok_or_else(|| s3_error("concatenate", "bad id"))?;
        let mut offset = 0;
        for part in parts {
            let mut bytes = ReaderStream::new(self.read(part).await?);
            offset = self.append(&id, offset, &mut bytes).await?;
        }
        let mut state = self.load(&id).await?;
        if !state.done || state.offset() != length {
            return Err(s3_error("concatenate", "parts changed while copied"));
        }
        state.info.concat = Some(Concat::Final(
            parts.iter().map(|p| p.as_str().to_owned()).collect(),
        ));
        self.save(&id, &mut state).await?;
        Ok(state.info)
    }
}
