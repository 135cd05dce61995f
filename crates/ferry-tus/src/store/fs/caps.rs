//! The fs store's optional capabilities: termination, deferred length and expiration.
//! Concatenation is in [`super::concat`], staging for checksums in [`super::stage`].

use async_trait::async_trait;
use tokio::fs;

use super::stage::remove_if_present;
use super::{FsStore, not_found, now_secs, secs};
use crate::id::UploadId;
use crate::store::{DeferLength, Expire, Store, StoreError, Terminate, UploadInfo};

#[async_trait]
impl Terminate for FsStore {
    async fn terminate(&self, id: &UploadId) -> Result<(), StoreError> {
        self.blocking(id, |p| {
            // The bytes of an upload placed at a storage key, behind its symlink.
            let placed = std::fs::read_link(&p.data).ok().map(|key| p.dir.join(key));
            // Info first: without it the upload no longer exists, even if removing the data
            // fails.
            p.entries
                .change(|| std::fs::remove_file(&p.info))
                .map_err(not_found)?;
            p.entries.change(|| remove_if_present(&p.data))?;
            if let Some(placed) = placed {
                p.entries.change(|| remove_if_present(&placed))?;
            }
            // A chunk held aside for a checksum that never came.
            let stage = p.data.with_extension("stage");
            Ok(p.entries.change(|| remove_if_present(&stage))?)
        })
        .await?;
        // A creation whose answer never came owes nothing once its files are gone.
        self.unsettled().remove(id);
        Ok(())
    }
}

#[async_trait]
impl DeferLength for FsStore {
    async fn set_length(&self, id: &UploadId, length: u64) -> Result<UploadInfo, StoreError> {
        let mut info = self.read_info(id).await?;
        info.length = Some(length);
        info.updated_at = now_secs();
        self.write_info(id, &info).await?;
        self.info(id).await
    }
}

impl FsStore {
    /// The ids of every upload with an info file (for scans; the directory is listed once).
    async fn upload_ids(&self) -> Result<Vec<UploadId>, StoreError> {
        let mut ids = Vec::new();
        let mut entries = fs::read_dir(&self.dir).await?;
        while let Some(entry) = entries.next_entry().await? {
            let name = entry.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".info"))
                .and_then(UploadId::parse)
            {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// Whether `id`'s info is what a creation cut short by a crash leaves (empty, or without its
    /// data file), last written before `cutoff`. Such an upload was never answered, so no
    /// client can come back for it; the cutoff keeps a creation under way out.
    async fn cut_short_before(&self, id: &UploadId, cutoff: u64) -> bool {
        let looked = self.blocking(id, move |p| {
            let info = std::fs::metadata(&p.info)?;
            let no_data = matches!(std::fs::symlink_metadata(&p.data),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound);
            let written = info.modified().map(secs)?;
            Ok((info.len() == 0 || no_data) && written < cutoff)
        });
        looked.await.unwrap_or(false)
    }
}

/// A scan over every info file skips one it cannot read (and says so), so a single damaged
/// upload never stops expiration for all the others.
fn unreadable(id: &UploadId, e: &StoreError) {
    tracing::warn!(upload = %id, error = %e, "skipping an unreadable upload info");
}

#[async_trait]
impl Expire for FsStore {
    async fn stale(&self, cutoff: u64) -> Result<Vec<UploadId>, StoreError> {
        let mut stale = Vec::new();
        for id in self.upload_ids().await? {
            match self.info(&id).await {
                Ok(info) if !info.is_complete() && info.updated_at < cutoff => stale.push(id),
                // A creation cut short: abandoned like an unfinished upload.
                Err(StoreError::NotFound) if self.cut_short_before(&id, cutoff).await => {
                    stale.push(id)
                }
                // Vanished meanwhile, or finished: nothing to reclaim.
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(e) => unreadable(&id, &e),
            }
        }
        Ok(stale)
    }
}
