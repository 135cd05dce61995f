//! Uploads on local disk: `{dir}/{id}` holds the bytes and `{dir}/{id}.info` the JSON info.
//!
//! Durability: the offset is never stored; it is the data file's length, so it can only count
//! bytes the kernel really holds. Info files are written to a temporary name, synced and renamed,
//! so a crash leaves the old or the new info, never half of one. Each `write` syncs the data
//! file before it returns, so an acknowledged offset survives power loss, not just a crash of
//! the process (see the README's durability section).
//!
//! The optional capabilities live in [`caps`].

mod caps;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use tokio::fs::{self, File, OpenOptions};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufWriter};

use super::{
    BodyReader, Concat, Concatenate, ConcatenateUnfinished, DeferLength, Expire, NewUpload, Store,
    StoreError, Terminate, Truncate, UploadInfo, UploadReader,
};
use crate::id::UploadId;

/// Write buffer between the body and the file: large enough to keep syscalls rare.
const WRITE_BUFFER: usize = 256 * 1024;

/// A store on a local directory.
#[derive(Debug, Clone)]
pub struct FsStore {
    dir: PathBuf,
}

impl FsStore {
    /// Opens (creating if needed) the directory.
    pub async fn open(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir).await?;
        Ok(Self { dir })
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

    async fn read_info(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        let raw = match fs::read(self.info_path(id)).await {
            Ok(raw) => raw,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(StoreError::NotFound),
            Err(e) => return Err(e.into()),
        };
        serde_json::from_slice(&raw).map_err(|e| StoreError::Io(std::io::Error::other(e)))
    }

    async fn write_info(&self, id: &UploadId, info: &UploadInfo) -> Result<(), StoreError> {
        let json = serde_json::to_vec(info).map_err(std::io::Error::other)?;
        let tmp = self.dir.join(format!("{id}.info.tmp"));
        let mut file = File::create(&tmp).await?;
        file.write_all(&json).await?;
        file.sync_all().await?;
        fs::rename(&tmp, self.info_path(id)).await?;
        sync_dir(&self.dir).await?;
        Ok(())
    }

    async fn data_len(&self, id: &UploadId) -> Result<u64, StoreError> {
        Ok(self.data_meta(id).await?.len())
    }

    async fn data_meta(&self, id: &UploadId) -> Result<std::fs::Metadata, StoreError> {
        match fs::metadata(self.data_path(id)).await {
            Ok(m) => Ok(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::NotFound),
            Err(e) => Err(e.into()),
        }
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Bytes written between background fsyncs of a long write.
const SYNC_EVERY: u64 = 64 * 1024 * 1024;

/// Copies `body` into `out`, starting an fsync in the background every [`SYNC_EVERY`] bytes
/// (one at a time) so the fsync that ends the write has little left to flush: the disk works
/// while the body is still arriving instead of after it.
async fn copy_syncing(
    body: BodyReader<'_>,
    out: &mut BufWriter<File>,
    syncer: &File,
) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let (mut total, mut since_sync) = (0u64, 0u64);
    let mut syncing: Option<tokio::task::JoinHandle<std::io::Result<()>>> = None;
    loop {
        let n = body.read(&mut buf).await?;
        if n == 0 {
            return Ok(total);
        }
        out.write_all(&buf[..n]).await?;
        total += n as u64;
        since_sync += n as u64;
        if since_sync >= SYNC_EVERY && syncing.as_ref().is_none_or(|t| t.is_finished()) {
            out.flush().await?;
            let file = syncer.try_clone().await?;
            syncing = Some(tokio::spawn(async move { file.sync_data().await }));
            since_sync = 0;
        }
    }
}

/// Makes a rename or create in `dir` durable.
async fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir).await?.sync_all().await
}

fn now_secs() -> u64 {
    secs(SystemTime::now())
}

#[async_trait]
impl Store for FsStore {
    async fn create(&self, upload: NewUpload) -> Result<UploadInfo, StoreError> {
        let id = UploadId::generate();
        let info = UploadInfo {
            id: id.to_string(),
            offset: 0,
            length: upload.length,
            metadata: upload.metadata,
            created_at: now_secs(),
            updated_at: now_secs(),
            concat: upload.partial.then_some(Concat::Partial),
            pending: false,
        };
        // Data file first: an info file always has its data file beside it.
        File::create(self.data_path(&id)).await?;
        self.write_info(&id, &info).await?;
        Ok(info)
    }

    async fn info(&self, id: &UploadId) -> Result<UploadInfo, StoreError> {
        let mut info = self.read_info(id).await?;
        let data = self.data_meta(id).await?;
        info.offset = data.len();
        // The data file's mtime is the last write; the info's own stamp covers length changes.
        let written = data.modified().map(secs).unwrap_or(info.updated_at);
        info.updated_at = info.updated_at.max(written);
        Ok(info)
    }

    async fn write(
        &self,
        id: &UploadId,
        offset: u64,
        body: BodyReader<'_>,
    ) -> Result<u64, StoreError> {
        let current = self.data_len(id).await?;
        if current != offset {
            return Err(StoreError::OffsetMismatch {
                sent: offset,
                current,
            });
        }
        let mut file = OpenOptions::new()
            .write(true)
            .open(self.data_path(id))
            .await?;
        file.seek(std::io::SeekFrom::Start(offset)).await?;
        let syncer = file.try_clone().await?;
        let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
        let copied = copy_syncing(body, &mut out, &syncer).await;
        // Whatever arrived before an error is kept: flush and sync it either way.
        let flushed = out.flush().await;
        let file = out.into_inner();
        let synced = file.sync_data().await;
        copied?;
        flushed?;
        synced?;
        Ok(self.data_len(id).await?)
    }

    async fn read(&self, id: &UploadId) -> Result<UploadReader, StoreError> {
        match File::open(self.data_path(id)).await {
            Ok(f) => Ok(Box::new(f)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::NotFound),
            Err(e) => Err(e.into()),
        }
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

    fn as_truncate(&self) -> Option<&dyn Truncate> {
        Some(self)
    }
}
