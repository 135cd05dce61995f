//! Live updates of Assemblies, for the update stream (`GET /assemblies/{id}/stream`): every saved
//! change of a record pokes the Assembly's channel, and each open stream wakes, reads the record
//! and sends what its client has not seen yet ([`events`]). A poke carries no data, so a stream
//! that misses one loses nothing: the record is the truth, and the channel only says "look again".
//!
//! Bounded: at most [`StreamLimits::listeners`] streams per Assembly (the slot is released when the
//! stream is dropped), each open at most [`StreamLimits::lifetime`] (clients reconnect with
//! `Last-Event-ID` and carry on), with a heartbeat comment every [`StreamLimits::heartbeat`] so a
//! dead connection is noticed and proxies keep it open.

pub mod events;
pub mod progress;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::id::Id;

/// The bounds of update streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLimits {
    /// Streams open at once for one Assembly.
    pub listeners: usize,
    /// How long one stream stays open before the server ends it (the client reconnects).
    pub lifetime: Duration,
    /// Idle time after which a heartbeat comment is sent.
    pub heartbeat: Duration,
    /// How often a stream reads the record even without a poke (changes made by another
    /// instance sharing the Assemblies reach it this way).
    pub refresh: Duration,
    /// How often a running Assembly's execution progress is saved (when it changed).
    pub progress: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            listeners: 16,
            lifetime: Duration::from_secs(600),
            heartbeat: Duration::from_secs(15),
            refresh: Duration::from_secs(2),
            progress: Duration::from_secs(1),
        }
    }
}

/// The channels of the Assemblies someone listens to.
#[derive(Debug, Default)]
pub struct Live {
    channels: Arc<Mutex<HashMap<Id, Channel>>>,
    limits: RwLock<StreamLimits>,
}

#[derive(Debug)]
struct Channel {
    tx: watch::Sender<u64>,
    listeners: usize,
}

/// A stream's place among its Assembly's listeners; released when dropped.
#[derive(Debug)]
pub struct Slot {
    channels: Arc<Mutex<HashMap<Id, Channel>>>,
    id: Id,
    /// Wakes when the Assembly's record was saved.
    pub changes: watch::Receiver<u64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut map) = self.channels.lock() {
            if let Some(c) = map.get_mut(&self.id) {
                c.listeners = c.listeners.saturating_sub(1);
                if c.listeners == 0 {
                    map.remove(&self.id);
                }
            }
        }
    }
}

impl Live {
    /// The current bounds.
    pub fn limits(&self) -> StreamLimits {
        self.limits.read().map(|l| *l).unwrap_or_default()
    }

    /// Sets the bounds for streams opened from now on.
    pub fn set_limits(&self, limits: StreamLimits) {
        if let Ok(mut l) = self.limits.write() {
            *l = limits;
        }
    }

    /// A listener's slot on Assembly `id`, or `None` when it already has as many as allowed.
    pub fn subscribe(&self, id: &Id) -> Option<Slot> {
        let cap = self.limits().listeners;
        let mut map = self.channels.lock().ok()?;
        let c = map.entry(id.clone()).or_insert_with(|| Channel {
            tx: watch::channel(0).0,
            listeners: 0,
        });
        if c.listeners >= cap {
            if c.listeners == 0 {
                map.remove(id);
            }
            return None;
        }
        c.listeners += 1;
        let changes = c.tx.subscribe();
        Some(Slot {
            channels: self.channels.clone(),
            id: id.clone(),
            changes,
        })
    }

    /// Assembly `id` changed: wake its listeners (nothing to do when there are none).
    pub fn poke(&self, id: &Id) {
        if let Ok(map) = self.channels.lock() {
            if let Some(c) = map.get(id) {
                c.tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    }

    /// Streams open on Assembly `id`.
    pub fn listeners(&self, id: &Id) -> usize {
        self.channels
            .lock()
            .ok()
            .and_then(|m| m.get(id).map(|c| c.listeners))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_capped_and_released() {
        let live = Live::default();
        live.set_limits(StreamLimits {
            listeners: 2,
            ..Default::default()
        });
        let id = Id::random();
        let a = live.subscribe(&id).expect("first");
        let b = live.subscribe(&id).expect("second");
        assert!(live.subscribe(&id).is_none(), "a third is over the cap");
        drop(a);
        assert_eq!(live.listeners(&id), 1);
        let c = live.subscribe(&id).expect("a freed slot is reused");
        live.poke(&id);
        assert!(c.changes.has_changed().unwrap_or(false));
        drop((b, c));
        assert_eq!(live.listeners(&id), 0);
        assert!(live.channels.lock().expect("lock").is_empty());
    }
}
