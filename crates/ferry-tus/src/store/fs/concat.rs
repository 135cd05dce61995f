//! Concatenation on the fs store: finals made at once from finished parts, and pending finals
//! (concatenation-unfinished) made when their last part finishes. The bytes are copied into a
//! temporary file that becomes the final's data file whole, or is removed. A finished part finds
//! the finals waiting for it through [`super::pending_index`], not by reading every info file.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use super::stage::remove_if_present;
use super::{FsStore, Paths, not_found, now_secs};
use crate::id::UploadId;
use crate::protocol::Metadata;
use crate::store::{Concat, Concatenate, ConcatenateUnfinished, Store, StoreError, UploadInfo};

impl FsStore {
    /// Copies the parts, in order, into `id`'s data file and returns the length. Bytes go to a
    /// temporary name (`{id}.concat.tmp`) and appear complete or not at all: a crash mid-copy
    /// leaves no final upload that claims bytes it lacks, and the next start sweeps the
    /// temporary file ([`FsStore::open`]). A copy that fails (a part deleted meanwhile, a full
    /// disk) removes it at once. `std::io::copy` lets the kernel copy file to file.
    async fn concat_into(&self, id: &UploadId, parts: &[UploadId]) -> Result<u64, StoreError> {
        let tmp = concat_tmp(&self.dir, id);
        let sources: Vec<_> = parts.iter().map(|p| self.data_path(p)).collect();
        self.blocking(id, move |p| {
            let copied = copy_parts(&p, &tmp, &sources);
            if copied.is_err()
                && let Err(e) = p.entries.change(|| remove_if_present(&tmp))
            {
                tracing::error!(path = %tmp.display(), error = %e, "concatenation leftover kept");
            }
            copied
        })
        .await
    }
}

/// Where the bytes of a concatenation gather before they become the final's.
pub(super) fn concat_tmp(dir: &Path, id: &UploadId) -> PathBuf {
    dir.join(format!("{id}{CONCAT_TMP_SUFFIX}"))
}

/// The suffix of [`concat_tmp`] files, which the store sweeps at start.
pub(super) const CONCAT_TMP_SUFFIX: &str = ".concat.tmp";

/// The copy of [`FsStore::concat_into`], leaving `tmp` behind when it fails.
fn copy_parts(p: &Paths, tmp: &Path, sources: &[PathBuf]) -> Result<u64, StoreError> {
    let mut out = p.entries.change(|| std::fs::File::create(tmp))?;
    let mut length = 0u64;
    for source in sources {
        let mut part = std::fs::File::open(source).map_err(not_found)?;
        length += std::io::copy(&mut part, &mut out)?;
    }
    p.sync(&out)?;
    p.entries.change(|| std::fs::rename(tmp, &p.data))?;
    Ok(length)
}

fn final_of(parts: &[UploadId]) -> Option<Concat> {
    Some(Concat::Final(parts.to_vec()))
}

#[async_trait]
impl Concatenate for FsStore {
    async fn concatenate(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError> {
        let id = UploadId::generate();
        let length = self.concat_into(&id, parts).await?;
        let info = UploadInfo {
            id: id.clone(),
            offset: length,
            length: Some(length),
            metadata,
            created_at: now_secs(),
            updated_at: now_secs(),
            concat: final_of(parts),
            pending: false,
            storage_key: None,
            owner,
        };
        if let Err(e) = self.write_info(&id, &info).await {
            // Without its info the bytes belong to no upload, and nothing would ever remove them.
            let data = self.data_path(&id);
            let removed = self.blocking(&id, move |p| {
                Ok(p.entries.change(|| remove_if_present(&data))?)
            });
            if let Err(e) = removed.await {
                tracing::error!(upload = %id, error = %e, "concatenated bytes without info kept");
            }
            return Err(e);
        }
        Ok(info)
    }
}

#[async_trait]
impl ConcatenateUnfinished for FsStore {
    async fn create_pending(
        &self,
        parts: &[UploadId],
        metadata: Metadata,
        owner: Option<String>,
    ) -> Result<UploadInfo, StoreError> {
        let id = UploadId::generate();
        let info = UploadInfo {
            id: id.clone(),
            offset: 0,
            length: None,
            metadata,
            created_at: now_secs(),
            updated_at: now_secs(),
            concat: final_of(parts),
            pending: true,
            storage_key: None,
            owner,
        };
        // Indexed before it exists: the index may name more than the pending finals, never less.
        self.pending.add(&self.dir, &id, parts).await?;
        self.create_with(&id, &info, false).await?;
        Ok(info)
    }

    async fn pending_with(&self, part: &UploadId) -> Result<Vec<UploadId>, StoreError> {
        let mut found = Vec::new();
        for id in self.pending.candidates(&self.dir, part).await? {
            match self.read_info(&id).await {
                Ok(UploadInfo {
                    pending: true,
                    concat: Some(Concat::Final(parts)),
                    ..
                }) if parts.contains(part) => found.push(id),
                // Finished, terminated or expired since it was indexed.
                Ok(_) | Err(StoreError::NotFound) => {
                    self.pending.forget(&id, std::slice::from_ref(part));
                }
                Err(e) => {
                    tracing::warn!(upload = %id, error = %e, "skipping an unreadable upload info");
                }
            }
        }
        Ok(found)
    }

    async fn finish_pending(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        let mut info = self.read_info(id).await?;
        let parts = match (&info.concat, info.pending) {
            (Some(Concat::Final(parts)), true) => parts.clone(),
            _ => return self.info(id).await,
        };
        // Bytes first, then the info: a crash between the two leaves a pending final that is
        // concatenated again.
        let length = self.concat_into(id, &parts).await?;
        info.length = Some(length);
        info.pending = false;
        info.updated_at = now_secs();
        self.write_info(id, &info).await?;
        self.pending.forget(id, &parts);
        self.info(id).await
    }
}
