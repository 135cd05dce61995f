//! ferry-tus's [`UploadLock`] on Redis leases, so the tus handler runs unchanged on several
//! instances: a newer request anywhere stops the holder (its stop signal), a lease that cannot be
//! renewed stops it too, and dropping the lease releases it. Every failure to take the lock
//! (Redis down, the holder would not let go within the wait, a newer request arrived while this
//! one waited) is [`LockError::Unavailable`]: the handler answers 503, which tus clients retry.

use async_trait::async_trait;
use ferry_tus::id::UploadId;
use ferry_tus::lock::{LockError, UploadLease, UploadLock};

use crate::cluster::Cluster;
use crate::error::ClusterError;
use crate::lock::{Lease, LeaseLocks};

/// Upload locks shared by every instance on the same Redis and prefix.
#[derive(Debug, Clone)]
pub struct RedisUploadLocks {
    locks: LeaseLocks,
}

impl RedisUploadLocks {
    /// Upload locks on `cluster`'s leases. Upload ids are resources `up:<id>`.
    pub fn new(cluster: &Cluster) -> Self {
        Self {
            locks: cluster.locks(),
        }
    }

    /// The lease-lock resource name of an upload.
    pub fn resource(id: &UploadId) -> String {
        format!("up:{}", id.as_str())
    }
}

fn lease(held: Lease) -> UploadLease {
    UploadLease::new(held.stop_signal().clone(), held)
}

fn unavailable(err: ClusterError) -> LockError {
    LockError::Unavailable(Box::new(err))
}

#[async_trait]
impl UploadLock for RedisUploadLocks {
    async fn acquire(&self, id: &UploadId) -> Result<UploadLease, LockError> {
        self.locks
            .lock(&Self::resource(id))
            .await
            .map(lease)
            .map_err(unavailable)
    }

    async fn try_acquire(&self, id: &UploadId) -> Result<Option<UploadLease>, LockError> {
        self.locks
            .try_lock(&Self::resource(id))
            .await
            .map(|held| held.map(lease))
            .map_err(unavailable)
    }
}
