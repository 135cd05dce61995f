//! Staging for the checksum extension: a checksummed chunk is written to `{id}.stage`, checked,
//! and only then appended to the data file. The offset is the data file's length, so it does not
//! move until the chunk is accepted: a crash before the check leaves only a stray stage file,
//! which the next stage replaces and termination removes, never unverified bytes counted.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::path::PathBuf;

use async_trait::async_trait;

use super::{FsStore, Fsync, append, not_found};
use crate::id::UploadId;
use crate::store::{BodyStream, Stage, StoreError};

impl FsStore {
    fn stage_path(&self, id: &UploadId) -> PathBuf {
        self.dir.join(format!("{id}.stage"))
    }
}

/// Removes a file that may not exist.
pub(super) fn remove_if_present(path: &std::path::Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[async_trait]
impl Stage for FsStore {
    async fn stage(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError> {
        let stage = self.stage_path(id);
        let ending = append::Ending {
            probe: self.probe.clone(),
            data: stage.clone(),
            also: Vec::new(),
        };
        let file = self
            .blocking(id, move |p| {
                let current = fs::metadata(&p.data).map_err(not_found)?.len();
                if current != offset {
                    return Err(StoreError::OffsetMismatch {
                        sent: offset,
                        current,
                    });
                }
                // A new file every time: a write still finishing for a dropped request goes to
                // the old one, never into this one.
                p.entries.change(|| remove_if_present(&stage))?;
                Ok(p.entries.change(|| File::create_new(&stage))?)
            })
            .await?;
        // Not synced: staged bytes count for nothing until committed, and the commit syncs.
        Ok(append::append(&self.appends, Fsync::Never, file, body, ending).await?)
    }

    async fn commit(&self, id: &UploadId) -> Result<u64, StoreError> {
        let stage = self.stage_path(id);
        self.blocking(id, move |p| {
            let mut staged = File::open(&stage).map_err(not_found)?;
            let mut data = OpenOptions::new()
                .write(true)
                .open(&p.data)
                .map_err(not_found)?;
            data.seek(SeekFrom::End(0))?;
            // The kernel copies file to file; should a crash cut the copy short, what it appended
            // is a prefix of an accepted chunk, so the offset still counts only good bytes.
            io::copy(&mut staged, &mut data)?;
            p.sync(&data)?;
            let offset = data.metadata()?.len();
            p.entries.change(|| fs::remove_file(&stage))?;
            Ok(offset)
        })
        .await
    }

    async fn discard(&self, id: &UploadId) -> Result<(), StoreError> {
        let stage = self.stage_path(id);
        self.blocking(id, move |p| {
            Ok(p.entries.change(|| remove_if_present(&stage))?)
        })
        .await
    }
}
