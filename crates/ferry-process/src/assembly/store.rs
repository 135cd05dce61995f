//! Assemblies on disk: `{root}/{id}/assembly.json` (the record, replaced atomically: written
//! beside, synced, renamed over), `{root}/{id}/uploads/` and `{root}/{id}/results/`. Nothing is
//! read or written outside an Assembly's own directory; every path inside it is built from ids.

use std::io;
use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use super::record::Assembly;
use crate::id::Id;

/// Largest record read back, in bytes.
const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// The directory of all Assemblies.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// Opens (creates) `root`.
    pub async fn open(root: PathBuf) -> io::Result<Self> {
        tokio::fs::create_dir_all(&root).await?;
        Ok(Self { root })
    }

    /// The directory of Assembly `id`.
    pub fn dir(&self, id: &Id) -> PathBuf {
        self.root.join(id.as_str())
    }

    /// Creates the directories of a new Assembly; fails if it exists.
    pub async fn create_dirs(&self, id: &Id) -> io::Result<()> {
        let dir = self.dir(id);
        tokio::fs::create_dir(&dir).await?;
        tokio::fs::create_dir(dir.join("uploads")).await?;
        tokio::fs::create_dir(dir.join("results")).await
    }

    /// Writes `a` atomically: a reader sees the old record or the new one, never a torn one.
    pub async fn save(&self, a: &Assembly) -> io::Result<()> {
        let dir = self.dir(&a.id);
        let tmp = dir.join(format!("assembly.json.{}.tmp", Id::random()));
        let bytes = serde_json::to_vec(a).map_err(io::Error::other)?;
        let result = async {
            let mut f = tokio::fs::File::create(&tmp).await?;
            f.write_all(&bytes).await?;
            f.sync_all().await?;
            tokio::fs::rename(&tmp, dir.join("assembly.json")).await
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&tmp).await;
        }
        result
    }

    /// Reads Assembly `id`; `Ok(None)` if there is none.
    pub async fn load(&self, id: &Id) -> io::Result<Option<Assembly>> {
        read(&self.dir(id).join("assembly.json")).await
    }

    /// Every Assembly on disk (a restart resumes the busy ones).
    pub async fn all(&self) -> io::Result<Vec<Assembly>> {
        let mut out = Vec::new();
        let mut entries = tokio::fs::read_dir(&self.root).await?;
        while let Some(entry) = entries.next_entry().await? {
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(Id::parse) else {
                continue;
            };
            match self.load(&id).await {
                Ok(Some(a)) => out.push(a),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(assembly = %id, error = %e, "unreadable assembly record skipped")
                }
            }
        }
        Ok(out)
    }

    /// Deletes Assembly `id`'s files (its `uploads/` and `results/`, emptied), keeping its
    /// record. Missing directories are no error.
    pub async fn clear_files(&self, id: &Id) -> io::Result<()> {
        for sub in ["uploads", "results"] {
            let path = self.dir(id).join(sub);
            match tokio::fs::remove_dir_all(&path).await {
                Ok(()) => tokio::fs::create_dir(&path).await?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Deletes Assembly `id` whole: record and files.
    pub async fn remove(&self, id: &Id) -> io::Result<()> {
        match tokio::fs::remove_dir_all(self.dir(id)).await {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Bytes in Assembly `id`'s directory (its files and record), symlinks not followed.
    pub async fn usage(&self, id: &Id) -> io::Result<u64> {
        let mut total = 0u64;
        let mut dirs = vec![self.dir(id)];
        while let Some(dir) = dirs.pop() {
            let mut entries = match tokio::fs::read_dir(&dir).await {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            while let Some(entry) = entries.next_entry().await? {
                let meta = tokio::fs::symlink_metadata(entry.path()).await?;
                if meta.is_dir() {
                    dirs.push(entry.path());
                } else {
                    total = total.saturating_add(meta.len());
                }
            }
        }
        Ok(total)
    }

    /// The absolute path of `relative` (a record's file path) inside Assembly `id`, if it stays
    /// inside (records are ours, but a path is checked before it is opened all the same).
    pub fn file_path(&self, id: &Id, relative: &str) -> Option<PathBuf> {
        let rel = Path::new(relative);
        rel.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
            .then(|| self.dir(id).join(rel))
    }
}

async fn read(path: &Path) -> io::Result<Option<Assembly>> {
    let meta = match tokio::fs::metadata(path).await {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.len() > MAX_RECORD_BYTES {
        return Err(io::Error::other("assembly record too large"));
    }
    let bytes = tokio::fs::read(path).await?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    #[tokio::test]
    async fn records_round_trip_and_replace() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path().join("a"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let id = Id::random();
        store
            .create_dirs(&id)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            store.create_dirs(&id).await.is_err(),
            "an id is created once"
        );
        let mut a = Assembly::new(
            id.clone(),
            json!({"auth": {"key": "k"}, "steps": {}}),
            vec![],
            Map::new(),
            2,
        );
        store.save(&a).await.unwrap_or_else(|e| panic!("{e}"));
        a.bytes_received = 7;
        store.save(&a).await.unwrap_or_else(|e| panic!("{e}"));
        let back = store.load(&id).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.as_ref().map(|b| b.bytes_received), Some(7));
        assert_eq!(
            back.map(|b| b.params),
            Some(json!({"steps": {}})),
            "auth is not kept"
        );
        assert_eq!(store.all().await.map(|v| v.len()).unwrap_or(0), 1);
        let upload = store.dir(&id).join("uploads").join("f");
        tokio::fs::write(&upload, b"12345")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let record = tokio::fs::metadata(store.dir(&id).join("assembly.json"))
            .await
            .map(|m| m.len())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.usage(&id).await.ok(), Some(record + 5));
        store
            .clear_files(&id)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!upload.exists(), "files are deleted");
        assert!(
            store.dir(&id).join("uploads").is_dir(),
            "the directory stays"
        );
        assert_eq!(store.usage(&id).await.ok(), Some(record));
        store.remove(&id).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(store.load(&id).await.ok().flatten().is_none());
        assert_eq!(store.usage(&id).await.ok(), Some(0));
        store.remove(&id).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(store.file_path(&id, "../x").is_none());
        assert!(store.file_path(&id, "/etc/passwd").is_none());
    }
}
