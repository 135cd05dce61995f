//! Keeping Assemblies within bounds: [`caps`] (per client, and the disk), [`shared`] (the caps
//! a fleet counts once for all its instances), [`sweep`] (expiry of ended and abandoned
//! Assemblies, in bounded passes), [`index`] (what both read, in memory), [`clock`] (the time
//! they read; a manual one in tests).

pub mod caps;
pub mod clock;
pub mod index;
pub mod shared;
pub mod sweep;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::assembly::record::Assembly;

/// [`Upkeep::fleet_held`] before the fleet's total was read, or when Redis does not answer.
const UNKNOWN: u64 = u64::MAX;

/// The upkeep's state inside the service.
#[derive(Debug)]
pub(crate) struct Upkeep {
    pub clock: clock::Clock,
    pub index: Arc<index::Index>,
    pub windows: caps::Windows,
    /// The fleet's counts (`--redis-url`), if any.
    pub shared: Option<Arc<dyn shared::SharedCaps>>,
    /// The bytes all the fleet's Assemblies hold, as last read ([`UNKNOWN`] before).
    fleet_bytes: AtomicU64,
    /// One sweep at a time (the background pass and a test's own).
    pub sweeping: tokio::sync::Mutex<()>,
}

impl Upkeep {
    pub fn new(clock: clock::Clock, shared: Option<Arc<dyn shared::SharedCaps>>) -> Self {
        Self {
            clock,
            index: Arc::default(),
            windows: caps::Windows::default(),
            shared,
            fleet_bytes: AtomicU64::new(UNKNOWN),
            sweeping: tokio::sync::Mutex::new(()),
        }
    }

    /// Bytes all Assemblies hold, as the disk cap counts them: in a fleet its total as last
    /// read (when it could be read), otherwise this instance's; with forms arriving here.
    pub fn disk_bytes(&self) -> u64 {
        match self.fleet_held() {
            Some(held) => held + self.index.pending(),
            None => self.index.bytes(),
        }
    }

    /// The fleet's total as last read, if it could be.
    pub fn fleet_held(&self) -> Option<u64> {
        Some(self.fleet_bytes.load(Ordering::Relaxed)).filter(|b| *b != UNKNOWN)
    }

    pub(crate) fn set_fleet_bytes(&self, total: u64) {
        self.fleet_bytes
            .store(total.min(UNKNOWN - 1), Ordering::Relaxed);
    }

    pub(crate) fn set_fleet_bytes_unknown(&self) {
        self.fleet_bytes.store(UNKNOWN, Ordering::Relaxed);
    }

    /// In a fleet, counts Assembly `a` (in progress) as this instance's from now on: a run
    /// taken over from a dead instance keeps its place under the client's cap.
    pub async fn reown(&self, a: &Assembly) {
        let (Some(shared), Some(client)) = (&self.shared, &a.client) else {
            return;
        };
        let held = shared::Held {
            client: client.clone(),
            id: a.id.clone(),
        };
        if let Err(e) = shared.renew(&[held]).await {
            tracing::warn!(assembly = %a.id, error = %e, "cannot count a taken-over assembly; the next round retries");
        }
    }

    /// Records `a` as just saved; in a fleet, an Assembly seen ending stops counting for its
    /// client. `ended_here`: this save ended it (the index may not have known it busy: another
    /// instance created it).
    pub fn observe(&self, a: &Assembly, ended_here: bool) {
        let seen_ending = self.index.observe(a, self.clock.now());
        let Some(shared) = &self.shared else { return };
        let ended = seen_ending.or_else(|| {
            let client = a.client.clone().filter(|_| ended_here)?;
            Some(shared::Held {
                client,
                id: a.id.clone(),
            })
        });
        if let Some(ended) = ended {
            shared::release_later(shared, ended);
        }
    }
}
