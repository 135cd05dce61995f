//! One writer per upload, in process. A new request for an upload cancels the one in flight
//! (its body stream stops at the next poll, keeps what it stored, and releases the lock), so a
//! hung connection never blocks resumption; requests for different uploads never wait on each
//! other. A shared lock service (Redis) can later implement the same two calls.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

use crate::id::UploadId;

#[derive(Debug, Default)]
struct Slot {
    mutex: Arc<AsyncMutex<()>>,
    /// Cancels the newest request that asked for this upload.
    newest: CancellationToken,
}

/// Hands out one lock per upload id, dropping entries nobody holds.
#[derive(Debug, Default, Clone)]
pub struct UploadLocks {
    slots: Arc<Mutex<HashMap<UploadId, Slot>>>,
}

/// Held while a request reads or changes one upload. `cancelled` fires when a newer request
/// for the same upload arrives.
#[derive(Debug)]
pub struct UploadGuard {
    _guard: OwnedMutexGuard<()>,
    pub cancelled: CancellationToken,
}

impl UploadLocks {
    /// Ends whatever request holds or awaits `id`, then takes the lock.
    pub async fn lock(&self, id: &UploadId) -> UploadGuard {
        let (mutex, token) = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            // Forget slots that only this map still references.
            slots.retain(|_, s| Arc::strong_count(&s.mutex) > 1);
            let slot = slots.entry(id.clone()).or_default();
            slot.newest.cancel();
            slot.newest = CancellationToken::new();
            (slot.mutex.clone(), slot.newest.clone())
        };
        UploadGuard {
            _guard: mutex.lock_owned().await,
            cancelled: token,
        }
    }

    /// Takes the lock only if nobody holds it, without ending anyone (for the sweeper).
    pub fn try_lock(&self, id: &UploadId) -> Option<UploadGuard> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(id.clone()).or_default();
        let guard = slot.mutex.clone().try_lock_owned().ok()?;
        Some(UploadGuard {
            _guard: guard,
            cancelled: slot.newest.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_newer_request_cancels_the_holder() {
        let locks = UploadLocks::default();
        let id = UploadId::generate();
        let first = locks.lock(&id).await;
        assert!(!first.cancelled.is_cancelled());
        let locks2 = locks.clone();
        let id2 = id.clone();
        let second = tokio::spawn(async move { locks2.lock(&id2).await });
        first.cancelled.cancelled().await;
        assert!(locks.try_lock(&id).is_none(), "still held by the first");
        drop(first);
        let second = second.await.expect("join");
        assert!(!second.cancelled.is_cancelled());
        let other = locks.lock(&UploadId::generate()).await;
        assert!(
            !second.cancelled.is_cancelled(),
            "other ids are independent"
        );
        drop(other);
    }
}
