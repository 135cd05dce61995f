//! Creating an upload's files, and the syncs a creation owes until they are made.
//!
//! The info file is written in place (created exclusively, so a taken id fails), then the bytes'
//! file beside it: a crash in between leaves an info without its data, which expiry reclaims
//! ([`super::caps`]), never bytes that no info names. Nothing is synced here; the info's and the
//! directory's syncs run together, at once ([`FsStore::create_with`]) or with the first write's
//! when the first bytes come in the same request ([`crate::store::Store::create_unsettled`]).

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::MutexGuard;

use super::syncs::{self, Job, Synced};
use super::{FsStore, Fsync, Paths};
use crate::id::UploadId;
use crate::store::{Concat, NewUpload, StoreError, UploadInfo, now_secs};

impl FsStore {
    /// Creates the upload's files (see [`Paths::create_files`]); unless `settled_later`, syncs
    /// them (per the policy) before returning, else records that they are owed.
    pub(super) async fn create_with(
        &self,
        id: &UploadId,
        info: &UploadInfo,
        settled_later: bool,
    ) -> Result<(), StoreError> {
        let info = info.clone();
        self.blocking(id, move |p| p.create_files(&info)).await?;
        match self.fsync {
            Fsync::Never => Ok(()),
            Fsync::Always if settled_later => {
                self.unsettled().insert(id.clone());
                Ok(())
            }
            Fsync::Always => Ok(syncs::together(&self.probe, self.creation_syncs(id)).await?),
        }
    }

    /// The syncs that make `id`'s creation durable: its info file's and the directory's.
    pub(super) fn creation_syncs(&self, id: &UploadId) -> Vec<Job> {
        let info = self.info_path(id);
        let (dir, dir_sync) = (self.dir.clone(), self.dir_sync.clone());
        vec![
            Job::new(Synced::Info, info.clone(), move || {
                File::open(&info)?.sync_all()
            }),
            Job::new(Synced::Dir, self.dir.clone(), move || {
                dir_sync.sync(|| File::open(&dir)?.sync_all())
            }),
        ]
    }

    /// Whether `id`'s creation still owes its syncs.
    pub(super) fn owes_syncs(&self, id: &UploadId) -> bool {
        self.unsettled().contains(id)
    }

    pub(super) fn unsettled(&self) -> MutexGuard<'_, HashSet<UploadId>> {
        // Every change is a single insert or remove: a poisoned set is still whole.
        self.unsettled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Suffixes of the store's own files, which a storage key may not end with.
const RESERVED_SUFFIXES: [&str; 3] = [".info", ".stage", ".tmp"];

fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// An existing file is a taken id or key; anything else stays an I/O failure.
fn taken(e: io::Error) -> StoreError {
    if e.kind() == io::ErrorKind::AlreadyExists {
        StoreError::AlreadyExists
    } else {
        StoreError::Io(e)
    }
}

impl Paths {
    /// Creates the bytes' file at `{dir}/{key}` and the upload's entry as a symlink to it.
    fn create_at_key(&self, key: &str) -> Result<(), StoreError> {
        if RESERVED_SUFFIXES.iter().any(|s| key.ends_with(s)) || Path::new(key).is_absolute() {
            return Err(StoreError::AlreadyExists);
        }
        let target = self.dir.join(key);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        self.entries.change(|| create_new(&target)).map_err(taken)?;
        #[cfg(unix)]
        let linked = self
            .entries
            .change(|| std::os::unix::fs::symlink(key, &self.data));
        #[cfg(not(unix))]
        let linked: io::Result<()> = Err(io::Error::other("storage keys need symlinks"));
        if let Err(e) = linked {
            let _ = self.entries.change(|| fs::remove_file(&target));
            return Err(taken(e));
        }
        Ok(())
    }

    /// Creates the info file with `info` in it (exclusively: an id already taken fails), then
    /// the bytes' file (exclusively, at the storage key if there is one); if that fails, removes
    /// the info again. Syncs nothing: see [`FsStore::create_with`].
    fn create_files(&self, info: &UploadInfo) -> Result<(), StoreError> {
        let json = serde_json::to_vec(info).map_err(io::Error::other)?;
        let mut file = self
            .entries
            .change(|| create_new(&self.info))
            .map_err(taken)?;
        let created = file
            .write_all(&json)
            .map_err(StoreError::from)
            .and_then(|()| match info.storage_key.as_deref() {
                None => self
                    .entries
                    .change(|| create_new(&self.data))
                    .map(drop)
                    .map_err(taken),
                Some(key) => self.create_at_key(key),
            });
        if created.is_err() {
            let _ = self.entries.change(|| fs::remove_file(&self.info));
        }
        created
    }
}

/// A new upload's info, with a generated id unless one was chosen.
pub(super) fn new_info(upload: NewUpload) -> UploadInfo {
    UploadInfo {
        id: upload.id.unwrap_or_else(UploadId::generate),
        offset: 0,
        length: upload.length,
        metadata: upload.metadata,
        created_at: now_secs(),
        updated_at: now_secs(),
        concat: upload.partial.then_some(Concat::Partial),
        pending: false,
        storage_key: upload.storage_key,
        owner: upload.owner,
    }
}
