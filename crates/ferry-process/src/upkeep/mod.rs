//! Keeping Assemblies within bounds: [`caps`] (per client, and the disk), [`sweep`] (expiry of
//! ended and abandoned Assemblies, in bounded passes), [`index`] (what both read, in memory),
//! [`clock`] (the time they read; a manual one in tests).

pub mod caps;
pub mod clock;
pub mod index;
pub mod sweep;

use std::sync::Arc;

/// The upkeep's state inside the service.
#[derive(Debug)]
pub(crate) struct Upkeep {
    pub clock: clock::Clock,
    pub index: Arc<index::Index>,
    pub windows: caps::Windows,
    /// One sweep at a time (the background pass and a test's own).
    pub sweeping: tokio::sync::Mutex<()>,
}

impl Upkeep {
    pub fn new(clock: clock::Clock) -> Self {
        Self {
            clock,
            index: Arc::default(),
            windows: caps::Windows::default(),
            sweeping: tokio::sync::Mutex::new(()),
        }
    }
}
