//! One writer per upload. A new request for an upload tells the one in flight to stop (its body
//! stream ends at the next poll, keeps what it stored, and lets go), so a hung connection never
//! blocks resumption; requests for different uploads never wait on each other.
//!
//! [`UploadLock`] is the contract the handler holds; [`LocalLocks`] keeps the locks in this
//! process. A lock shared by several instances (a lease in Redis) implements the same trait: its
//! acquisition may fail ([`LockError`], answered 503), it tells its holder to stop through the
//! lease's stop signal (a newer request on any instance, or a lease it could not renew), and it
//! releases when the lease is dropped.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::id::UploadId;

/// Hands out one lock per upload id.
#[async_trait]
pub trait UploadLock: Send + Sync + fmt::Debug + 'static {
    /// Takes `id`'s lock for a request. Whatever request holds or awaits it is told to stop
    /// first, and this waits until it has let go.
    async fn acquire(&self, id: &UploadId) -> Result<UploadLease, LockError>;

    /// Takes `id`'s lock only if nobody holds it, ending no one (for the expiry sweeper);
    /// `Ok(None)` while it is held.
    async fn try_acquire(&self, id: &UploadId) -> Result<Option<UploadLease>, LockError>;
}

/// A held upload lock; dropping it releases the lock.
pub struct UploadLease {
    stop: CancellationToken,
    /// Whatever the implementation needs to keep the lock (a guard, a renewal task) and to
    /// give it back when dropped.
    _held: Box<dyn Any + Send + Sync>,
}

impl UploadLease {
    /// A lease kept by `held` (released when `held` is dropped) whose holder must stop once
    /// `stop` is cancelled.
    pub fn new(stop: CancellationToken, held: impl Any + Send + Sync) -> Self {
        Self {
            stop,
            _held: Box::new(held),
        }
    }

    /// Fires when the holder must stop: a newer request for the upload arrived, or the lock
    /// could not be kept.
    pub fn stop_signal(&self) -> CancellationToken {
        self.stop.clone()
    }
}

impl fmt::Debug for UploadLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UploadLease")
            .field("stopped", &self.stop.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// Why a lock could not be taken. The cause is logged, never sent to the client.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The service keeping the locks could not be reached or failed.
    #[error("upload lock service unavailable: {0}")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

#[derive(Debug, Default)]
struct Slot {
    mutex: Arc<AsyncMutex<()>>,
    /// Stops the newest request that asked for this upload.
    newest: CancellationToken,
}

/// The locks of one process, dropping entries nobody holds.
#[derive(Debug, Default, Clone)]
pub struct LocalLocks {
    slots: Arc<Mutex<HashMap<UploadId, Slot>>>,
}

#[async_trait]
impl UploadLock for LocalLocks {
    async fn acquire(&self, id: &UploadId) -> Result<UploadLease, LockError> {
        let (mutex, stop) = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            // Forget slots that only this map still references.
            slots.retain(|_, s| Arc::strong_count(&s.mutex) > 1);
            let slot = slots.entry(id.clone()).or_default();
            slot.newest.cancel();
            slot.newest = CancellationToken::new();
            (slot.mutex.clone(), slot.newest.clone())
        };
        Ok(UploadLease::new(stop, mutex.lock_owned().await))
    }

    async fn try_acquire(&self, id: &UploadId) -> Result<Option<UploadLease>, LockError> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(id.clone()).or_default();
        let guard = slot.mutex.clone().try_lock_owned().ok();
        Ok(guard.map(|guard| UploadLease::new(slot.newest.clone(), guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_newer_request_cancels_the_holder() {
        let locks = LocalLocks::default();
        let id = UploadId::generate();
        let first = locks.acquire(&id).await.expect("lock");
        assert!(!first.stop_signal().is_cancelled());
        let locks2 = locks.clone();
        let id2 = id.clone();
        let second = tokio::spawn(async move { locks2.acquire(&id2).await.expect("lock") });
        first.stop_signal().cancelled().await;
        let held = locks.try_acquire(&id).await.expect("try");
        assert!(held.is_none(), "still held by the first");
        drop(first);
        let second = second.await.expect("join");
        assert!(!second.stop_signal().is_cancelled());
        let other = locks.acquire(&UploadId::generate()).await.expect("lock");
        assert!(
            !second.stop_signal().is_cancelled(),
            "other ids are independent"
        );
        drop(other);
    }
}
