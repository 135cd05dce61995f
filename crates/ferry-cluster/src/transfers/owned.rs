//! The owner's side of a transfer: [`OwnedTransfer`] checkpoints, finishes or hands over, only
//! while its epoch is current; its heartbeat keeps the lease and the stream entry fresh, reads the
//! fleet's wishes back, and restores the record if Redis lost it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::record::{Desired, Directives, HINT, TransferRecord};
use super::scripts::scripts;
use super::{GROUP, RECORD_TTL_MS, STREAM_TTL_MS, TransferRegistry};
use crate::clock::{ms, now_ms};
use crate::cluster::{Owned, ToRedisArgsDyn};
use crate::error::{ClusterError, Result};
use crate::pubsub::HubEvent;

/// What the owner caches to restore its record after Redis lost it.
#[derive(Debug, Default)]
struct Cache {
    fields: Vec<(String, String)>,
}

impl Cache {
    fn set(&mut self, pairs: &[(String, String)]) {
        for (k, v) in pairs {
            match self.fields.iter_mut().find(|(key, _)| key == k) {
                Some(slot) => slot.1.clone_from(v),
                None => self.fields.push((k.clone(), v.clone())),
            }
        }
    }
}

/// A transfer this instance owns. Heartbeats in the background while it lives; dropping it
/// without [`Self::finish`] or [`Self::hand_over`] leaves it to be taken over after the takeover
/// window (what a crash does).
#[derive(Debug)]
pub struct OwnedTransfer {
    registry: TransferRegistry,
    record: TransferRecord,
    entry: String,
    directives: watch::Receiver<Directives>,
    lost: CancellationToken,
    drain: CancellationToken,
    cache: Arc<Mutex<Cache>>,
    tasks: Vec<JoinHandle<()>>,
    done: bool,
}

impl OwnedTransfer {
    pub(super) async fn start(
        registry: &TransferRegistry,
        record: TransferRecord,
        entry: String,
    ) -> Self {
        let cluster = &registry.cluster;
        let inner = &cluster.inner;
        let (tx, directives) = watch::channel(Directives {
            desired: record.desired,
            socket_seen: record.socket_seen,
        });
        let tx = Arc::new(tx);
        let lost = CancellationToken::new();
        let drain = CancellationToken::new();
        let mut cache = Cache::default();
        let mut fields = vec![
            ("token".to_owned(), record.token.clone()),
            ("state".to_owned(), record.state.clone()),
            ("desired".to_owned(), record.desired.as_str().to_owned()),
            ("request".to_owned(), record.request.clone()),
            ("attempts".to_owned(), record.attempts.to_string()),
        ];
        fields.extend(
            record
                .hints
                .iter()
                .map(|(k, v)| (format!("{HINT}{k}"), v.clone())),
        );
        cache.set(&fields);
        let cache = Arc::new(Mutex::new(cache));
        inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                record.token.clone(),
                Owned {
                    epoch: record.epoch,
                    entry: entry.clone(),
                    drain: drain.clone(),
                },
            );
        inner
            .counters
            .transfers_owned
            .fetch_add(1, Ordering::Relaxed);
        let mut tasks = Vec::new();
        // Control messages: a hint to re-read the record now rather than at the next beat.
        let (poke_tx, poke_rx) = mpsc::channel::<()>(1);
        if let Ok(mut controls) = inner
            .hub
            .subscribe(
                &inner.keys.transfer_control(&record.token),
                inner.config.connect_timeout * 2,
            )
            .await
        {
            tasks.push(tokio::spawn(async move {
                while let Some(event) = controls.recv().await {
                    if matches!(event, HubEvent::Message(_) | HubEvent::Resubscribed) {
                        let _ = poke_tx.try_send(());
                    }
                }
            }));
        }
        tasks.push(tokio::spawn(heartbeat(
            registry.clone(),
            record.token.clone(),
            record.epoch,
            entry.clone(),
            tx,
            lost.clone(),
            cache.clone(),
            poke_rx,
        )));
        Self {
            registry: registry.clone(),
            record,
            entry,
            directives,
            lost,
            drain,
            cache,
            tasks,
            done: false,
        }
    }

    /// The transfer's token.
    pub fn token(&self) -> &str {
        &self.record.token
    }

    /// This ownership's epoch (fencing token).
    pub fn epoch(&self) -> u64 {
        self.record.epoch
    }

    /// The record as it was when this instance took ownership (request, hints, attempts).
    pub fn record(&self) -> &TransferRecord {
        &self.record
    }

    /// Pause/resume/cancel and socket presence, as wanted by the fleet; changes wake watchers.
    pub fn directives(&self) -> watch::Receiver<Directives> {
        self.directives.clone()
    }

    /// Fires when ownership is lost (another instance claimed it; the epoch moved on): stop at
    /// once, write nothing more.
    pub fn lost_signal(&self) -> &CancellationToken {
        &self.lost
    }

    /// Fires when the instance shuts down: checkpoint and [`Self::hand_over`].
    pub fn drain_signal(&self) -> &CancellationToken {
        &self.drain
    }

    fn pairs(state: Option<&str>, hints: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = hints
            .iter()
            .map(|(k, v)| (format!("{HINT}{k}"), (*v).to_owned()))
            .collect();
        if let Some(state) = state {
            pairs.push(("state".to_owned(), state.to_owned()));
        }
        pairs
    }

    fn refused(&self) -> ClusterError {
        self.lost.cancel();
        ClusterError::LeaseLost
    }

    /// Records progress: an optional new state and hints (e.g. `offset`, `upload_url`), only if
    /// this ownership is still current; [`ClusterError::LeaseLost`] (and the lost signal) if not.
    pub async fn checkpoint(&self, state: Option<&str>, hints: &[(&str, &str)]) -> Result<()> {
        if self.lost.is_cancelled() {
            return Err(ClusterError::LeaseLost);
        }
        let pairs = Self::pairs(state, hints);
        let cluster = &self.registry.cluster;
        let now = now_ms();
        let mut args: Vec<&dyn ToRedisArgsDyn> =
            vec![&cluster.inner.instance, &self.record.epoch, &now];
        for (k, v) in &pairs {
            args.push(k);
            args.push(v);
        }
        let key = cluster.inner.keys.transfer(&self.record.token);
        let written: i64 = cluster.eval(&scripts().write, &[&key], &args).await?;
        if written != 1 {
            return Err(self.refused());
        }
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .set(&pairs);
        Ok(())
    }

    /// Ends the transfer with a final `state` (`succeeded`, `failed`, `canceled`) and hints; the
    /// record is kept `keep` for late sockets and status queries, the entry is removed.
    pub async fn finish(
        mut self,
        state: &str,
        hints: &[(&str, &str)],
        keep: Duration,
    ) -> Result<()> {
        self.stop_tasks();
        let pairs = Self::pairs(Some(state), hints);
        let cluster = self.registry.cluster.clone();
        let inner = &cluster.inner;
        let [stream, record, lease] = self.registry.keys3(&self.record.token);
        let (keep_ms, now) = (ms(keep).max(1), now_ms());
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &self.record.epoch,
            &self.entry,
            &keep_ms,
            &now,
        ];
        for (k, v) in &pairs {
            args.push(k);
            args.push(v);
        }
        let done: i64 = cluster
            .eval(&scripts().finish, &[&stream, &record, &lease], &args)
            .await?;
        if done == 1 {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    /// Gives the transfer up at once (shutdown): records the hints, drops the lease and makes the
    /// entry claimable now, and wakes the other instances' reapers.
    pub async fn hand_over(mut self, hints: &[(&str, &str)]) -> Result<()> {
        self.stop_tasks();
        let pairs = Self::pairs(None, hints);
        let (token, epoch, entry) = (
            self.record.token.clone(),
            self.record.epoch,
            self.entry.clone(),
        );
        if self
            .registry
            .hand_over_entry(&token, epoch, &entry, &pairs)
            .await?
        {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    /// Stops heartbeating without telling anyone, as a crash would: the transfer is taken over
    /// after the takeover window. For tests of that path.
    pub fn forget(mut self) {
        self.stop_tasks();
    }

    fn stop_tasks(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        for task in &self.tasks {
            task.abort();
        }
        let inner = &self.registry.cluster.inner;
        inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.record.token);
        inner
            .counters
            .transfers_owned
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for OwnedTransfer {
    fn drop(&mut self) {
        self.stop_tasks();
    }
}

/// The owner's beat: lease, entry freshness, record expiry; reads the wanted state back.
#[allow(clippy::too_many_arguments)]
async fn heartbeat(
    registry: TransferRegistry,
    token: String,
    epoch: u64,
    mut entry: String,
    directives: Arc<watch::Sender<Directives>>,
    lost: CancellationToken,
    cache: Arc<Mutex<Cache>>,
    mut poke: mpsc::Receiver<()>,
) {
    let cluster = registry.cluster.clone();
    let inner = &cluster.inner;
    let every = inner.config.transfer_heartbeat();
    let lease_ms = ms(inner.config.transfer_lease());
    let [stream, record, lease] = registry.keys3(&token);
    loop {
        let beat: Result<(i64, String, String)> = cluster
            .eval(
                &scripts().heartbeat,
                &[&stream, &record, &lease],
                &[
                    &GROUP,
                    &inner.instance,
                    &epoch,
                    &entry,
                    &lease_ms,
                    &RECORD_TTL_MS,
                    &STREAM_TTL_MS,
                ],
            )
            .await;
        match beat {
            Ok((1, desired, socket)) => {
                let next = Directives {
                    desired: Desired::parse(&desired),
                    socket_seen: socket == "1",
                };
                directives.send_if_modified(|current| {
                    let changed = *current != next;
                    *current = next;
                    changed
                });
            }
            Ok((2, _, _)) => {
                // Redis lost the record (restart without persistence): put it back, same epoch.
                let fields = cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .fields
                    .clone();
                match registry.create(&token, epoch, &fields).await {
                    Ok(new_entry) => {
                        entry = new_entry;
                        if let Some(owned) = inner
                            .owned
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_mut(&token)
                        {
                            owned.entry.clone_from(&entry);
                        }
                        continue;
                    }
                    Err(ClusterError::AlreadyRegistered) => continue,
                    Err(_) => {}
                }
            }
            Ok(_) => {
                lost.cancel();
                return;
            }
            // Redis unreachable: the transfer keeps running; the epoch check decides later.
            Err(_) => {}
        }
        tokio::select! {
            () = inner.halt.cancelled() => return,
            () = tokio::time::sleep(every) => {}
            _ = poke.recv() => {}
        }
    }
}
