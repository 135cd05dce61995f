//! The transfer registry in Redis: a record per transfer (hash) plus one entry per transfer in a
//! stream consumer group whose pending list says which instance owns it.
//!
//! The instance that registers a transfer owns it from the start (the entry is added and read
//! into its pending list in one script). The owner heartbeats: it refreshes its lease, keeps its
//! entry fresh (`XCLAIM … JUSTID`) and re-reads the wanted state (pause/resume/cancel; pub/sub
//! control messages can be lost). When an owner falls silent, its lease expires and, after
//! `transfer_takeover`, any instance's reaper takes the entry with `XAUTOCLAIM`; a script then
//! claims the record and bumps its epoch. Every owner write checks the epoch, so a zombie owner's
//! writes are refused and it learns it lost the transfer. At shutdown an owner hands over: its
//! entry is marked idle at once and reapers are woken, so another instance claims it immediately.
//!
//! # Layout
//!
//! - this file: [`TransferRegistry`]: register, read, steer, and hand over at shutdown.
//! - `record`: [`TransferRecord`] as stored, and what the fleet wants of it ([`Desired`],
//!   [`Control`], [`Directives`]).
//! - `reaper`: takeover of silent owners' transfers ([`TransferRegistry::claim_stale`],
//!   [`TransferRegistry::spawn_reaper`]).
//! - `owned`: the owner's side, [`OwnedTransfer`] and its heartbeat.
//! - `scripts`: the Lua scripts, by name.

mod owned;
mod reaper;
mod record;
mod scripts;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::clock::{ms, now_ms};
use crate::cluster::{Cluster, Owned, ToRedisArgsDyn};
use crate::error::{ClusterError, Result};

pub use owned::OwnedTransfer;
pub use record::{Control, Desired, Directives, TransferRecord};
use scripts::scripts;

/// The consumer group of the transfer stream.
pub(crate) const GROUP: &str = "ferry";
/// How long a live record is kept after its last write.
const RECORD_TTL_MS: u64 = 24 * 3600 * 1000;
/// How long the stream lives without any write (it is re-created on the next registration).
const STREAM_TTL_MS: u64 = 24 * 3600 * 1000;
/// A transfer claimed more often than this is failed instead (a poison transfer).
pub const MAX_ATTEMPTS: u64 = 5;
/// Idle time given to a handed-over entry: far past any takeover window.
const HANDED_OVER_IDLE_MS: u64 = 24 * 3600 * 1000;

/// What a reaper claim found for one entry.
#[derive(Debug)]
pub enum Claimed {
    /// This instance owns the transfer now and must resume it.
    Owned(OwnedTransfer),
    /// The transfer was claimed too often and was failed; report its error to the client.
    Failed(TransferRecord),
}

/// The fleet's transfer registry (from [`Cluster::transfers`]).
#[derive(Debug, Clone)]
pub struct TransferRegistry {
    cluster: Cluster,
}

impl Cluster {
    /// The transfer registry shared by the fleet.
    pub fn transfers(&self) -> TransferRegistry {
        TransferRegistry {
            cluster: self.clone(),
        }
    }
}

impl TransferRegistry {
    fn keys3(&self, token: &str) -> [String; 3] {
        let keys = &self.cluster.inner.keys;
        [
            keys.transfer_stream(),
            keys.transfer(token),
            keys.transfer_lease(token),
        ]
    }

    /// Records a new transfer owned by this instance (epoch 1) with its serialised `request` and
    /// initial `state`. [`ClusterError::AlreadyRegistered`] if the token exists.
    pub async fn register(&self, token: &str, request: &str, state: &str) -> Result<OwnedTransfer> {
        let fields = vec![
            ("token".to_owned(), token.to_owned()),
            ("state".to_owned(), state.to_owned()),
            ("desired".to_owned(), "run".to_owned()),
            ("request".to_owned(), request.to_owned()),
            ("attempts".to_owned(), "1".to_owned()),
        ];
        let entry = self.create(token, 1, &fields).await?;
        let record = TransferRecord {
            token: token.to_owned(),
            owner: self.cluster.inner.instance.clone(),
            epoch: 1,
            state: state.to_owned(),
            desired: Desired::Run,
            socket_seen: false,
            request: request.to_owned(),
            hints: HashMap::new(),
            attempts: 1,
            last_error: None,
        };
        Ok(OwnedTransfer::start(self, record, entry).await)
    }

    /// Creates the record and its entry (owned here); the `token` field must come first in
    /// `fields`. Used for registration and for restoring a record lost with a Redis restart.
    async fn create(&self, token: &str, epoch: u64, fields: &[(String, String)]) -> Result<String> {
        let inner = &self.cluster.inner;
        let [stream, record, lease] = self.keys3(token);
        let (lease_ms, now) = (ms(inner.config.transfer_lease()), now_ms());
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &epoch,
            &STREAM_TTL_MS,
            &lease_ms,
            &RECORD_TTL_MS,
            &now,
        ];
        for (k, v) in fields {
            args.push(k);
            args.push(v);
        }
        let (created, entry): (i64, String) = self
            .cluster
            .eval(&scripts().register, &[&stream, &record, &lease], &args)
            .await?;
        if created == 1 {
            Ok(entry)
        } else {
            Err(ClusterError::AlreadyRegistered)
        }
    }

    /// The record of `token`, if any.
    pub async fn get(&self, token: &str) -> Result<Option<TransferRecord>> {
        let map: HashMap<String, String> = self
            .cluster
            .query(redis::cmd("HGETALL").arg(self.cluster.inner.keys.transfer(token)))
            .await?;
        Ok((!map.is_empty()).then(|| TransferRecord::from_map(token, map)))
    }

    /// Sends a control to the transfer's owner wherever it runs, and records it (so an owner
    /// that missed the message, or the next claimer, still honours it). False if no such transfer.
    pub async fn control(&self, token: &str, control: Control) -> Result<bool> {
        let keys = &self.cluster.inner.keys;
        let (field, value, message) = match control {
            Control::Pause => ("desired", Desired::Pause.as_str(), "pause"),
            Control::Resume => ("desired", Desired::Run.as_str(), "resume"),
            Control::Cancel => ("desired", Desired::Cancel.as_str(), "cancel"),
            Control::SocketConnected => ("socket", "1", "connection"),
        };
        let done: i64 = self
            .cluster
            .eval(
                &scripts().control,
                &[&keys.transfer(token)],
                &[&field, &value, &keys.transfer_control(token), &message],
            )
            .await?;
        Ok(done == 1)
    }

    /// Tokens of the transfers this instance owns now.
    pub fn owned(&self) -> Vec<String> {
        let owned = self
            .cluster
            .inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        owned.keys().cloned().collect()
    }

    /// For shutdown (SIGTERM): fires every owned transfer's [`OwnedTransfer::drain_signal`] so
    /// it checkpoints and calls [`OwnedTransfer::hand_over`]; waits up to `within`, then hands
    /// over whatever is still owned here itself. Returns how many were handed over by force.
    pub async fn drain(&self, within: Duration) -> Result<usize> {
        let started = Instant::now();
        let snapshot = || -> Vec<(String, Owned)> {
            let owned = self
                .cluster
                .inner
                .owned
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            owned.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        for (_, owned) in snapshot() {
            owned.drain.cancel();
        }
        while !snapshot().is_empty() && started.elapsed() < within {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut forced = 0;
        for (token, owned) in snapshot() {
            if self
                .hand_over_entry(&token, owned.epoch, &owned.entry, &[])
                .await?
            {
                forced += 1;
            }
            self.cluster
                .inner
                .owned
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token);
        }
        Ok(forced)
    }

    async fn hand_over_entry(
        &self,
        token: &str,
        epoch: u64,
        entry: &str,
        pairs: &[(String, String)],
    ) -> Result<bool> {
        let inner = &self.cluster.inner;
        let [stream, record, lease] = self.keys3(token);
        let wake = inner.keys.transfer_wake();
        let now = now_ms();
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &epoch,
            &entry,
            &HANDED_OVER_IDLE_MS,
            &wake,
            &now,
        ];
        for (k, v) in pairs {
            args.push(k);
            args.push(v);
        }
        let done: i64 = self
            .cluster
            .eval(&scripts().hand_over, &[&stream, &record, &lease], &args)
            .await?;
        if done == 1 {
            inner.counters.handovers.fetch_add(1, Ordering::Relaxed);
        }
        Ok(done == 1)
    }
}
