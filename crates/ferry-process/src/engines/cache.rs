//! What an engine read about a file, kept per file: the meta probe of an upload and each step
//! that reads the same upload (a resize's header, an encode's and a thumbnailer's source probe)
//! would otherwise start the same engine again for the same answer, and each start costs
//! 0.05–0.3 s. A file is known by its device, inode, length and change time, so a file
//! rewritten in place, or a new file under an old path, is read again.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;

/// A file's identity for the caches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    ctime: (i64, i64),
}

impl FileIdentity {
    /// `path`'s identity, when it can be read.
    pub(crate) async fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = tokio::fs::metadata(path).await.ok()?;
        Some(Self {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// Values per file, the oldest forgotten first past [`PerFile::CAPACITY`].
#[derive(Debug)]
pub(crate) struct PerFile<T>(Mutex<(HashMap<FileIdentity, T>, VecDeque<FileIdentity>)>);

impl<T> Default for PerFile<T> {
    fn default() -> Self {
        Self(Mutex::new((HashMap::new(), VecDeque::new())))
    }
}

impl<T: Clone> PerFile<T> {
    const CAPACITY: usize = 1024;

    pub(crate) fn get(&self, id: &FileIdentity) -> Option<T> {
        self.0.lock().ok()?.0.get(id).cloned()
    }

    pub(crate) fn put(&self, id: FileIdentity, value: T) {
        let Ok(mut guard) = self.0.lock() else { return };
        let (map, order) = &mut *guard;
        if map.insert(id.clone(), value).is_none() {
            order.push_back(id);
        }
        while order.len() > Self::CAPACITY {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }
}
