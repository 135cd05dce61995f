//! One writer per upload, in process. Requests for the same upload take turns; requests for
//! different uploads never wait on each other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::id::UploadId;

/// Hands out one async lock per upload id, dropping entries nobody holds.
#[derive(Debug, Default, Clone)]
pub struct UploadLocks {
    locks: Arc<Mutex<HashMap<UploadId, Arc<AsyncMutex<()>>>>>,
}

/// Held while a request reads or changes one upload.
#[derive(Debug)]
pub struct UploadGuard {
    _guard: OwnedMutexGuard<()>,
}

impl UploadLocks {
    pub async fn lock(&self, id: &UploadId) -> UploadGuard {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            // Forget locks that only this map still references.
            locks.retain(|_, l| Arc::strong_count(l) > 1);
            locks.entry(id.clone()).or_default().clone()
        };
        UploadGuard {
            _guard: lock.lock_owned().await,
        }
    }
}
