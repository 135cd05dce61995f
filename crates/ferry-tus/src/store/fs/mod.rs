//! Uploads on local disk: `{dir}/{id}` holds the bytes and `{dir}/{id}.info` the JSON info.
//!
//! Durability: the offset is never stored; it is the data file's length, so it can only count
//! bytes the kernel really holds. A changed info is written to a temporary name, synced and
//! renamed, so a crash leaves the old or the new info, never half of one. By default
//! ([`Fsync::Always`]) each `write` syncs the data file before it returns, so an acknowledged
//! offset survives power loss, not just a crash of the process (see "Storage and durability" in
//! docs/server.md). The directory sync that makes a creation's entries durable is shared by
//! creations that run at once ([`dir_sync`]).
//!
//! A creation writes its info file in place, then the data file beside it, and syncs the info
//! and the directory together ([`syncs`]); a creation whose first bytes follow in the same request
//! ([`Store::create_unsettled`]) leaves those syncs to that write, which runs them together with
//! its data file's, or to [`Store::settle`]: one wait for the disk per request instead of three.
//! What a crash before the answer can leave, none of it ever acknowledged: nothing; an info file
//! without its data file, or an empty one (written but not yet on the disk), which no request
//! sees as an upload and expiry reclaims like any abandoned upload ([`caps`]); a whole upload
//! with fewer bytes than were sent, which expires likewise. An info rewrite cut short leaves a
//! `.info.tmp`, removed when the store opens.
//!
//! File system calls that belong together run as one blocking task (creating an upload's files
//! is three calls, reading its info two), so a request waits for the blocking pool once, not per
//! call. Creating lives in [`create`], appending in [`append`] (its batches in [`batch`]); the
//! optional capabilities in [`caps`], [`concat`] (with the index of pending finals,
//! [`pending_index`]) and [`stage`].
//!
//! Chosen ids and storage keys (a pre-create hook's `ChangeFileInfo`): a chosen id is created
//! exclusively, so a taken one fails with [`StoreError::AlreadyExists`]. With a storage key the
//! bytes live at `{dir}/{key}` (created exclusively, its directories as needed) and `{dir}/{id}`
//! is a relative symlink to it, so every other operation finds the bytes where it always looks;
//! termination removes both. A key may not end in a suffix the store uses for its own files
//! (`.info`, `.stage`, `.tmp`), so it can never overwrite another upload's state.

mod append;
mod batch;
mod caps;
mod concat;
mod create;
mod dir_sync;
mod pending_index;
mod stage;
mod syncs;

pub use syncs::{SyncProbe, Synced};

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use super::{
    BodyStream, Concatenate, ConcatenateUnfinished, DeferLength, Expire, Location, NewUpload,
    Stage, Store, StoreError, Terminate, UploadInfo, UploadReader, now_secs,
};
use crate::id::UploadId;
use syncs::Probe;

/// When the store asks the kernel to put bytes on the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fsync {
    /// Before acknowledging anything: data before each write returns, info files and directory
    /// entries before a creation or change returns. What was acknowledged survives power loss.
    #[default]
    Always,
    /// Never: the kernel writes back in its own time. What was acknowledged survives a crash of
    /// the process (the kernel holds it) but not of the machine, which is what tusd and
    /// @tus/server give. Writes no longer wait for the disk, which matters where it is slow.
    Never,
}

/// A store on a local directory.
#[derive(Debug, Clone)]
pub struct FsStore {
    dir: PathBuf,
    fsync: Fsync,
    appends: Arc<append::Appends>,
    entries: Arc<DirEntries>,
    dir_sync: Arc<dir_sync::DirSync>,
    pending: Arc<pending_index::PendingIndex>,
    /// Uploads created with [`Store::create_unsettled`] whose creation is not durable yet.
    unsettled: Arc<Mutex<HashSet<UploadId>>>,
    probe: Probe,
}

impl FsStore {
    /// Opens (creating if needed) the directory, and removes what concatenations cut short by a
    /// crash left behind: no upload owns those bytes, so nothing else ever would. The index of
    /// pending finals is built from the info files in the background.
    pub async fn open(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        append::raise_allocator_thresholds();
        tokio::fs::create_dir_all(&dir).await?;
        sweep_leftovers(&dir).await?;
        let pending = Arc::new(pending_index::PendingIndex::default());
        let (index, at) = (pending.clone(), dir.clone());
        tokio::spawn(async move { index.build(&at).await });
        Ok(Self {
            dir,
            fsync: Fsync::default(),
            appends: Arc::default(),
            entries: Arc::default(),
            dir_sync: Arc::default(),
            pending,
            unsettled: Arc::default(),
            probe: Probe::default(),
        })
    }

    /// The same store with another sync policy.
    pub fn with_fsync(self, fsync: Fsync) -> Self {
        Self { fsync, ..self }
    }

    /// The same store, telling `probe` of every sync a request waits on (tests, diagnosis).
    pub fn with_sync_probe(self, probe: Arc<dyn SyncProbe>) -> Self {
        Self {
            probe: Probe(Some(probe)),
            ..self
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where an upload's bytes are kept.
    pub fn data_path(&self, id: &UploadId) -> PathBuf {
        self.dir.join(id.as_str())
    }

    fn info_path(&self, id: &UploadId) -> PathBuf {
        self.dir.join(format!("{id}.info"))
    }

    /// Runs `work` on the blocking pool with this store's paths.
    async fn blocking<T: Send + 'static>(
        &self,
        id: &UploadId,
        work: impl FnOnce(Paths) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let paths = Paths {
            fsync: self.fsync,
            entries: self.entries.clone(),
            dir_sync: self.dir_sync.clone(),
            dir: self.dir.clone(),
            data: self.data_path(id),
            info: self.info_path(id),
        };
        tokio::task::spawn_blocking(move || work(paths))
            .await
            .map_err(|e| StoreError::Io(io::Error::other(e)))?
    }

    async fn read_info(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        self.blocking(id, |p| p.read_info()).await
    }

    async fn write_info(&self, id: &UploadId, info: &UploadInfo) -> Result<(), StoreError> {
        let info = info.clone();
        self.blocking(id, move |p| p.write_info(&info)).await
    }
}

/// Removes what work cut short by a crash left in `dir`: `*.concat.tmp` (a concatenation) and
/// `*.info.tmp` (an info rewrite; the info before it stands). The fs store serves one process,
/// so at start no such work is under way.
async fn sweep_leftovers(dir: &Path) -> io::Result<()> {
    let mut entries = tokio::fs::read_dir(dir).await?;
    while let Some(entry) = entries.next_entry().await? {
        let name = entry.file_name();
        if name
            .to_str()
            .is_some_and(|n| n.ends_with(concat::CONCAT_TMP_SUFFIX) || n.ends_with(INFO_TMP_SUFFIX))
        {
            // One that cannot be removed is worth a warning, not a server that will not start.
            match tokio::fs::remove_file(entry.path()).await {
                Ok(()) => tracing::info!(file = ?name, "removed a leftover of a crash"),
                Err(e) => tracing::warn!(file = ?name, error = %e, "leftover of a crash kept"),
            }
        }
    }
    Ok(())
}

/// The temporary name of a changed info, beside the upload's `.info`.
const INFO_TMP_SUFFIX: &str = ".info.tmp";

/// Serialises the calls that add, rename or remove entries of the store's directory.
///
/// The kernel serialises them anyway, under the directory's lock; but a thread waiting for that
/// lock spins while the holder runs, and with hundreds of uploads created at once (each creation
/// searching for a free inode) the spinning took a fifth of the CPU. Waiting here sleeps.
#[derive(Debug, Default)]
struct DirEntries(std::sync::Mutex<()>);

impl DirEntries {
    fn change<T>(&self, call: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        // Nothing panics while holding it, and the guarded value is `()`: poisoning is moot.
        let _turn = self.0.lock().unwrap_or_else(|p| p.into_inner());
        call()
    }
}

/// One upload's files, owned so blocking tasks can take them.
struct Paths {
    fsync: Fsync,
    entries: Arc<DirEntries>,
    dir_sync: Arc<dir_sync::DirSync>,
    dir: PathBuf,
    data: PathBuf,
    info: PathBuf,
}

impl Paths {
    fn read_info(&self) -> Result<UploadInfo, StoreError> {
        parse_info(&fs::read(&self.info).map_err(not_found)?)
    }

    fn write_info(&self, info: &UploadInfo) -> Result<(), StoreError> {
        let json = serde_json::to_vec(info).map_err(io::Error::other)?;
        let tmp = self.info.with_extension(&INFO_TMP_SUFFIX[1..]);
        let mut file = self.entries.change(|| File::create(&tmp))?;
        file.write_all(&json)?;
        self.sync(&file)?;
        self.entries.change(|| fs::rename(&tmp, &self.info))?;
        // Makes the rename (and the data file's creation) durable; concurrent creations share
        // one sync of the directory.
        if self.fsync == Fsync::Always {
            self.dir_sync.sync(|| File::open(&self.dir)?.sync_all())?;
        }
        Ok(())
    }

    /// Syncs `file` unless the policy is [`Fsync::Never`].
    fn sync(&self, file: &File) -> io::Result<()> {
        match self.fsync {
            Fsync::Always => file.sync_all(),
            Fsync::Never => Ok(()),
        }
    }

    /// The info with `offset` set from the data file's length.
    fn info(&self) -> Result<UploadInfo, StoreError> {
        let mut info = self.read_info()?;
        let data = fs::metadata(&self.data).map_err(not_found)?;
        info.offset = data.len();
        // The data file's mtime is the last write; the info's own stamp covers length changes.
        let written = data.modified().map(secs).unwrap_or(info.updated_at);
        info.updated_at = info.updated_at.max(written);
        Ok(info)
    }
}

/// An info file's contents. An empty one is a creation under way, or one a crash cut short before
/// it was answered (its bytes never reached the disk): not an upload.
fn parse_info(raw: &[u8]) -> Result<UploadInfo, StoreError> {
    if raw.is_empty() {
        return Err(StoreError::NotFound);
    }
    serde_json::from_slice(raw).map_err(|e| StoreError::Io(io::Error::other(e)))
}

fn not_found(e: io::Error) -> StoreError {
    if e.kind() == io::ErrorKind::NotFound {
        StoreError::NotFound
    } else {
        StoreError::Io(e)
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[async_trait]
impl Store for FsStore {
    async fn create(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        let info = create::new_info(upload);
        self.create_with(&info.id, &info, false).await?;
        Ok(info)
    }

    async fn create_unsettled(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        let info = create::new_info(upload);
        self.create_with(&info.id, &info, true).await?;
        Ok(info)
    }

    async fn settle(&self, id: &UploadId) -> Result<(), StoreError> {
        if self.owes_syncs(id) {
            syncs::together(&self.probe, self.creation_syncs(id)).await?;
            self.unsettled().remove(id);
        }
        Ok(())
    }

    async fn info(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        self.blocking(id, |p| p.info()).await
    }

    async fn write(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyStream<'_>,
    ) -> Result<u64, StoreError> {
        let file = self
            .blocking(id, move |p| {
                let mut file = OpenOptions::new()
                    .write(true)
                    .open(&p.data)
                    .map_err(not_found)?;
                let current = file.metadata()?.len();
                if current != offset {
                    return Err(StoreError::OffsetMismatch {
                        sent: offset,
                        current,
                    });
                }
                file.seek(SeekFrom::Start(offset))?;
                Ok(file)
            })
            .await?;
        // A creation that left its syncs to this write has them made with the data file's.
        let owed = self.owes_syncs(id);
        let ending = append::Ending {
            probe: self.probe.clone(),
            data: self.data_path(id),
            also: if owed {
                self.creation_syncs(id)
            } else {
                Vec::new()
            },
        };
        let written = append::append(&self.appends, self.fsync, file, body, ending).await?;
        if owed {
            self.unsettled().remove(id);
        }
        Ok(offset + written)
    }

    async fn read(&self, id: &UploadId) -> Result<UploadReader, StoreError> {
        let file = tokio::fs::File::open(self.data_path(id))
            .await
            .map_err(not_found)?;
        Ok(Box::new(file))
    }

    fn location(&self, info: &UploadInfo) -> Option<Location> {
        let data = match &info.storage_key {
            Some(key) => self.dir.join(key),
            None => self.data_path(&info.id),
        };
        Some(Location::File {
            data,
            info: self.info_path(&info.id),
        })
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

    fn as_stage(&self) -> Option<&dyn Stage> {
        Some(self)
    }
}
