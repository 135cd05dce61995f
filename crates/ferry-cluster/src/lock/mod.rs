//! Lease locks with fencing: one holder per resource (a tus upload) across the fleet.
//!
//! A lock is a key `SET NX PX` to `<instance>/<nonce>|<fence>`, the fence taken from a counter
//! that only grows, in one Lua script. The holder renews the lease in the background; if a renew
//! is refused or the lease deadline passes without one (Redis gone, process paused), the holder is
//! told the lease is lost and must stop writing. Contention follows the in-process lock: a newer
//! request ends the older one. The newcomer asks the holder to let go (directly when it is on
//! the same instance, else with a release request on the holder's instance channel), and waits
//! for the release notice or polls; an older waiter that sees a newer one gives up.
//!
//! # Layout
//!
//! - this file: [`LeaseLocks`], taking a lock under contention (release requests, waiting).
//! - `lease`: [`Lease`], holding it (renewal, self-fencing, fenced writes, release).
//! - `scripts`: the Lua scripts, by name.

mod lease;
mod scripts;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::RngCore;

use crate::clock::ms;
use crate::cluster::Cluster;
use crate::error::{ClusterError, Result};
use crate::pubsub::HubEvent;

pub use lease::Lease;
use scripts::scripts;

/// How long the fence counter lives without a new grant (it is re-seeded from the fenced record
/// if it expired, so fences keep growing while that record exists).
const FENCE_TTL_MS: u64 = 30 * 24 * 3600 * 1000;
/// How often a waiting request repeats its release request (pub/sub is at-most-once).
const REQUEST_AGAIN: Duration = Duration::from_secs(1);

fn nonce() -> String {
    let mut bytes = [0u8; 8];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Who holds a lock: the instance and the fence of its grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub instance: String,
    pub fence: u64,
}

impl Holder {
    fn parse(value: &str) -> Option<Self> {
        let (owner, fence) = value.rsplit_once('|')?;
        let (instance, _) = owner.split_once('/')?;
        Some(Self {
            instance: instance.to_owned(),
            fence: fence.parse().ok()?,
        })
    }
}

enum Attempt {
    Acquired(String),
    Held(String),
    Superseded,
}

#[derive(Clone, Copy)]
enum Mode {
    New,
    Retry,
    Try,
}

/// The lease locks of one instance (from [`Cluster::locks`]).
#[derive(Debug, Clone)]
pub struct LeaseLocks {
    cluster: Cluster,
}

impl Cluster {
    /// The lease locks, shared with every instance on the same Redis and prefix.
    pub fn locks(&self) -> LeaseLocks {
        LeaseLocks {
            cluster: self.clone(),
        }
    }
}

impl LeaseLocks {
    async fn attempt(&self, resource: &str, owner: &str, mode: Mode) -> Result<Attempt> {
        let inner = &self.cluster.inner;
        let keys = &inner.keys;
        let config = &inner.config;
        let mode_arg = match mode {
            Mode::New => "new",
            Mode::Retry => "retry",
            Mode::Try => "try",
        };
        let result: Result<(i64, String)> = self
            .cluster
            .eval(
                &scripts().acquire,
                &[
                    &keys.lock(resource),
                    &keys.fence(resource),
                    &keys.want(resource),
                    &keys.fenced(resource),
                ],
                &[
                    &owner,
                    &ms(config.lock_ttl),
                    &FENCE_TTL_MS,
                    &mode_arg,
                    &(ms(config.lock_wait) + 1000),
                ],
            )
            .await;
        let (code, value) = match result {
            Ok(answer) => answer,
            Err(err) => {
                self.clean_up_after_timeout(resource, owner);
                return Err(err);
            }
        };
        Ok(match code {
            1 => Attempt::Acquired(value),
            2 => Attempt::Superseded,
            _ => Attempt::Held(value),
        })
    }

    /// Takes the lock on `resource`, ending whichever request holds or awaits it (anywhere in the
    /// fleet). Waits up to `lock_wait` for the holder to stop; then [`ClusterError::LockBusy`].
    /// [`ClusterError::Superseded`] when a newer request for the same resource came meanwhile.
    pub async fn lock(&self, resource: &str) -> Result<Lease> {
        let inner = &self.cluster.inner;
        let config = &inner.config;
        let owner = format!("{}/{}", inner.instance, nonce());
        let deadline = Instant::now() + config.lock_wait;
        let mut mode = Mode::New;
        let mut released = None;
        let mut asked: Option<(String, Instant)> = None;
        loop {
            let sent = Instant::now();
            let holder = match self.attempt(resource, &owner, mode).await? {
                Attempt::Acquired(value) => {
                    return Ok(Lease::start(&self.cluster, resource, value, sent));
                }
                Attempt::Superseded => return Err(ClusterError::Superseded),
                Attempt::Held(holder) => holder,
            };
            mode = Mode::Retry;
            // Listen for the release notice before trying again, so a release between the first
            // attempt and the subscription is not missed.
            let Some(notices) = released.as_mut() else {
                released = Some(
                    inner
                        .hub
                        .subscribe(&inner.keys.released(resource), config.connect_timeout * 2)
                        .await?,
                );
                continue;
            };
            let due = asked
                .as_ref()
                .is_none_or(|(value, at)| *value != holder || at.elapsed() >= REQUEST_AGAIN);
            if due {
                self.request_release(&holder).await?;
                asked = Some((holder, Instant::now()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ClusterError::LockBusy);
            }
            let pause = config.lock_poll.min(deadline - now);
            tokio::select! {
                event = notices.recv() => if event.is_none() { return Err(ClusterError::LockBusy) },
                () = tokio::time::sleep(pause) => {}
            }
        }
    }

    /// An attempt that timed out may still run in Redis later (e.g. after a `CLIENT PAUSE`) and
    /// grant a lease nobody renews; queued behind it, this deletes such an orphan at once instead
    /// of letting it block the resource for a TTL.
    fn clean_up_after_timeout(&self, resource: &str, owner: &str) {
        let cluster = self.cluster.clone();
        let (resource, owner) = (resource.to_owned(), owner.to_owned());
        tokio::spawn(async move {
            let keys = &cluster.inner.keys;
            let _ = cluster
                .eval::<i64>(
                    &scripts().release_owner,
                    &[&keys.lock(&resource), &keys.released(&resource)],
                    &[&owner],
                )
                .await;
        });
    }

    /// Takes the lock only if nobody holds it, ending no one (for sweepers and expiry).
    pub async fn try_lock(&self, resource: &str) -> Result<Option<Lease>> {
        let owner = format!("{}/{}", self.cluster.inner.instance, nonce());
        let sent = Instant::now();
        Ok(match self.attempt(resource, &owner, Mode::Try).await? {
            Attempt::Acquired(value) => Some(Lease::start(&self.cluster, resource, value, sent)),
            Attempt::Held(_) | Attempt::Superseded => None,
        })
    }

    /// Who holds `resource` now, if anyone.
    pub async fn holder(&self, resource: &str) -> Result<Option<Holder>> {
        let value: Option<String> = self
            .cluster
            .query(redis::cmd("GET").arg(self.cluster.inner.keys.lock(resource)))
            .await?;
        Ok(value.as_deref().and_then(Holder::parse))
    }

    /// The fenced record of `resource` (written with [`Lease::write_fenced`]); empty if none.
    /// Its `fence` field is the fence of the grant that last wrote it.
    pub async fn read_fenced(&self, resource: &str) -> Result<HashMap<String, String>> {
        self.cluster
            .query(redis::cmd("HGETALL").arg(self.cluster.inner.keys.fenced(resource)))
            .await
    }

    /// Asks the holder with lock value `holder` to stop: directly if it is here, else on its
    /// instance's channel.
    async fn request_release(&self, holder: &str) -> Result<()> {
        let inner = &self.cluster.inner;
        let Some(parsed) = Holder::parse(holder) else {
            return Ok(());
        };
        if parsed.instance == inner.instance {
            stop_local_holder(&self.cluster, holder);
            return Ok(());
        }
        inner
            .counters
            .release_requests_sent
            .fetch_add(1, Ordering::Relaxed);
        self.cluster
            .publish(
                &inner.keys.instance(&parsed.instance),
                &format!("release {holder}"),
            )
            .await
    }
}

fn stop_local_holder(cluster: &Cluster, value: &str) {
    let holders = cluster
        .inner
        .holders
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(stop) = holders.get(value) {
        stop.cancel();
    }
}

/// Subscribes the instance's own channel and serves release requests from other instances.
pub(crate) async fn listen_for_release_requests(cluster: &Cluster) -> Result<()> {
    let inner = &cluster.inner;
    let mut requests = inner
        .hub
        .subscribe(
            &inner.keys.instance(&inner.instance),
            inner.config.connect_timeout * 2,
        )
        .await?;
    let weak = Arc::downgrade(&cluster.inner);
    tokio::spawn(async move {
        while let Some(event) = requests.recv().await {
            let HubEvent::Message(payload) = event else {
                continue;
            };
            let Some(inner) = weak.upgrade() else { return };
            if let Some(value) = payload.strip_prefix("release ") {
                inner
                    .counters
                    .release_requests_received
                    .fetch_add(1, Ordering::Relaxed);
                stop_local_holder(&Cluster { inner }, value);
            }
        }
    });
    Ok(())
}
