//! The caps that protect what a fleet shares (`--redis-url`), counted once for all its
//! instances: a client's Assemblies in progress (`--assembly-max-active-per-client`) and its
//! creations per window (`--assembly-max-per-client`). Without this, a client spreading its
//! requests over N instances would get N times each cap. [`SharedCaps`] is the seam;
//! ferry-cluster implements it on Redis. Without a fleet each instance counts alone, from its
//! [`super::index`] and [`super::caps::Windows`].
//!
//! The disk cap (`--assembly-max-disk`) protects the shared directory, so it counts the fleet's
//! bytes too: each instance reports the bytes of every Assembly whose size it sees change (an
//! absolute figure per Assembly, so two instances reporting the same one never count it twice)
//! and reads the total back (`spawn_disk`). Forms still arriving count on the instance
//! receiving them only, until their Assembly is saved.
//!
//! An Assembly in progress counts under a lease, so the counts of an instance that dies do not
//! stay: it is counted when it is admitted, released as soon as a save shows it ended (on
//! whichever instance saves it), and renewed by rounds (`spawn`) on every instance that knows it
//! in progress (each reads its record on the shared directory first, so a stale view never
//! renews an ended one). A run taken over from a dead instance is renewed by the instance that
//! took it; an Assembly still uploading that no live instance knows stops counting when its
//! lease lapses, and counts again once an upload reaches it.

use std::fmt;
use std::io;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;

use super::caps::Quotas;
use crate::id::Id;
use crate::service::{Inner, Service};

/// Why the fleet refused a new Assembly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The client has this many Assemblies in progress across the fleet.
    Active(usize),
    /// The client's window is full; it ends in this many milliseconds.
    Window(u64),
}

/// One Assembly in progress and the client it counts for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The client (`key@address`).
    pub client: String,
    /// The Assembly.
    pub id: Id,
}

/// Counts shared by the instances of a fleet.
#[async_trait]
pub trait SharedCaps: Send + Sync + fmt::Debug {
    /// Counts Assembly `id` among `client`'s in progress and as one creation in its window,
    /// unless either cap of `quotas` is reached (then nothing is counted). A cap of 0 is none.
    async fn admit(
        &self,
        client: &str,
        id: &Id,
        quotas: &Quotas,
    ) -> io::Result<Result<(), Refusal>>;

    /// These Assemblies are still in progress: their leases start again (re-added if they
    /// lapsed).
    async fn renew(&self, held: &[Held]) -> io::Result<()>;

    /// These Assemblies ended: they no longer count.
    async fn release(&self, ended: &[Held]) -> io::Result<()>;

    /// How long an Assembly counts without a renewal.
    fn lease(&self) -> Duration;

    /// Sets the bytes each of these Assemblies holds on the shared directory (0: none, it is
    /// forgotten); the tally lives `keep` past its last change. The fleet's total after.
    async fn set_bytes(&self, bytes: &[(Id, u64)], keep: Duration) -> io::Result<u64>;

    /// The bytes all the fleet's Assemblies hold, as last reported.
    async fn total_bytes(&self) -> io::Result<u64>;
}

/// Releases `ended` in the background (a save must not wait on Redis).
pub(crate) fn release_later(shared: &Arc<dyn SharedCaps>, ended: Held) {
    let shared = shared.clone();
    tokio::spawn(async move {
        if let Err(e) = shared.release(std::slice::from_ref(&ended)).await {
            tracing::warn!(assembly = %ended.id, error = %e, "cannot release an ended assembly's count; it lapses with its lease");
        }
    });
}

/// Renews, four times per lease while the service lives, the counts of the Assemblies this
/// instance knows in progress (when the per-client cap is on).
pub(crate) fn spawn(service: Weak<Inner>, shared: Arc<dyn SharedCaps>) {
    let every = (shared.lease() / 4).clamp(Duration::from_millis(250), Duration::from_secs(15));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(inner) = service.upgrade() else {
                return;
            };
            let svc = Service(inner);
            if svc.config().quotas.max_active_per_client > 0
                && let Err(e) = round(&svc, shared.as_ref()).await
            {
                tracing::warn!(error = %e, "cannot renew the fleet's assembly counts; retrying next round");
            }
        }
    });
}

/// One round: each Assembly the index shows in progress is read from the shared directory;
/// one still in progress is renewed, one that ended elsewhere is observed (which releases
/// it), one whose directory is gone is forgotten and released.
async fn round(svc: &Service, shared: &dyn SharedCaps) -> io::Result<()> {
    let upkeep = &svc.0.upkeep;
    let mut held = Vec::new();
    let mut gone = Vec::new();
    for h in upkeep.index.busy() {
        match svc.0.store.load(&h.id).await {
            Ok(Some(a)) if a.state.is_busy() => held.push(h),
            Ok(Some(a)) => upkeep.observe(&a, false),
            Ok(None) => {
                upkeep.index.remove(&h.id);
                gone.push(h);
            }
            // Unreadable for now: it keeps counting.
            Err(_) => held.push(h),
        }
    }
    if !gone.is_empty() {
        shared.release(&gone).await?;
    }
    if !held.is_empty() {
        shared.renew(&held).await?;
    }
    Ok(())
}

/// Reports this instance's changes of Assembly sizes to the fleet's tally as they happen, and
/// reads the fleet's total back at least every second, while the service lives (when the disk
/// cap is on). The first report is every Assembly the start found.
pub(crate) fn spawn_disk(service: Weak<Inner>, shared: Arc<dyn SharedCaps>) {
    if let Some(inner) = service.upgrade() {
        if inner.config.quotas.max_disk.is_none() {
            return;
        }
        inner.upkeep.index.report_changes();
    }
    tokio::spawn(async move {
        // Warned once per outage, not every second of it.
        let mut failing = false;
        loop {
            let Some(inner) = service.upgrade() else {
                return;
            };
            let svc = Service(inner);
            let q = &svc.config().quotas;
            // Longer than any Assembly lives unchanged: uploads, a retention, a tombstone's.
            let keep = q
                .upload_timeout
                .saturating_add(q.retention.saturating_mul(2))
                .max(Duration::from_secs(3600));
            let index = svc.0.upkeep.index.clone();
            let changed = index.take_changed();
            let total = if changed.is_empty() {
                shared.total_bytes().await
            } else {
                let mut result = Ok(0);
                for batch in changed.chunks(DISK_BATCH) {
                    result = shared.set_bytes(batch, keep).await;
                    if result.is_err() {
                        break;
                    }
                }
                if result.is_err() {
                    index.mark_changed(changed.into_iter().map(|(id, _)| id));
                }
                result
            };
            match total {
                Ok(total) => {
                    svc.0.upkeep.set_fleet_bytes(total);
                    failing = false;
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "cannot tally the fleet's assembly bytes; this instance's own count applies meanwhile");
                    }
                    failing = true;
                    svc.0.upkeep.set_fleet_bytes_unknown();
                }
            }
            drop(svc);
            tokio::select! {
                () = index.changes() => {}
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    });
}

/// Assemblies reported per call.
const DISK_BATCH: usize = 500;
