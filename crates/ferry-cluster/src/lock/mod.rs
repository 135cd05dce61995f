//! Lease locks with fencing: one holder per resource (a tus upload) across the fleet.
//!
//! A lock is a key `SET NX PX` to `<instance>/<nonce>|<fence>`, the fence taken from a counter
//! that only grows, in one Lua script. The holder renews the lease in the background; if a renew
//! is refused or the lease deadline passes without one (Redis gone, process paused), the holder is
//! told the lease is lost and must stop writing. Contention follows the in-process lock: a newer
//! request ends the older one. The newcomer asks the holder to let go (directly when it is on
//! the same instance, else with a release request on the holder's instance channel), and waits
//! for the release notice or polls; an older waiter that sees a newer one gives up.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::RngCore;
use redis::Script;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cluster::Cluster;
use crate::error::{ClusterError, Result};
use crate::pubsub::HubEvent;

/// How long the fence counter lives without a new grant (it is re-seeded from the fenced record
/// if it expired, so fences keep growing while that record exists).
const FENCE_TTL_MS: u64 = 30 * 24 * 3600 * 1000;
/// How often a waiting request repeats its release request (pub/sub is at-most-once).
const REQUEST_AGAIN: Duration = Duration::from_secs(1);

const ACQUIRE: &str = r"
-- KEYS: lock, fence, want, fenced; ARGV: owner, ttl_ms, fence_ttl_ms, mode, want_ttl_ms
local mode = ARGV[4]
if mode == 'new' then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
elseif mode == 'retry' then
  local w = redis.call('GET', KEYS[3])
  if w and w ~= ARGV[1] then return {2, w} end
end
local cur = redis.call('GET', KEYS[1])
if cur then return {0, cur} end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local seed = redis.call('HGET', KEYS[4], 'fence')
  if seed then redis.call('SET', KEYS[2], seed) end
end
local fence = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local val = ARGV[1] .. '|' .. fence
redis.call('SET', KEYS[1], val, 'PX', ARGV[2])
return {1, val}
";

const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
";

const RELEASE_OWNER: &str = r"
-- KEYS: lock, released channel; ARGV: owner (without the fence)
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], v)
  return 1
end
return 0
";

const WRITE_FENCED: &str = r"
-- KEYS: lock, fenced; ARGV: value, fence, ttl_ms, field, value, ...
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'fence', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
";

fn scripts() -> &'static [Script; 5] {
    static SCRIPTS: std::sync::OnceLock<[Script; 5]> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| {
        [
            Script::new(ACQUIRE),
            Script::new(RENEW),
            Script::new(RELEASE),
            Script::new(WRITE_FENCED),
            Script::new(RELEASE_OWNER),
        ]
    })
}

fn nonce() -> String {
    let mut bytes = [0u8; 8];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
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
                &scripts()[0],
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
                    &scripts()[4],
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

/// State a lease shares with its renewal task.
#[derive(Debug)]
struct Shared {
    /// Fires when someone else wants the lock, or when the lease is lost.
    stop: CancellationToken,
    /// Fires when the lease is lost (renew refused, or its deadline passed without a renew).
    lost: CancellationToken,
    /// Until when the holder may act: last successful renew sent + TTL − margin.
    valid_until: Mutex<Instant>,
}

/// A held lock. Renewed in the background while it lives; released when dropped (or with
/// [`Lease::release`]). Before each write to the guarded resource the holder checks
/// [`Lease::is_held`] (self-fencing) and passes [`Lease::fence`] to stores that can check it.
#[derive(Debug)]
pub struct Lease {
    cluster: Cluster,
    resource: String,
    value: String,
    fence: u64,
    shared: Arc<Shared>,
    renewal: JoinHandle<()>,
    done: bool,
}

impl Lease {
    fn start(cluster: &Cluster, resource: &str, value: String, sent: Instant) -> Self {
        let inner = &cluster.inner;
        let config = &inner.config;
        let margin = (config.lock_ttl / 5).min(Duration::from_secs(2));
        let shared = Arc::new(Shared {
            stop: CancellationToken::new(),
            lost: CancellationToken::new(),
            valid_until: Mutex::new(sent + config.lock_ttl - margin),
        });
        inner
            .holders
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(value.clone(), shared.stop.clone());
        inner.counters.leases_held.fetch_add(1, Ordering::Relaxed);
        let fence = Holder::parse(&value).map_or(0, |h| h.fence);
        let renewal = tokio::spawn(renew(
            cluster.clone(),
            inner.keys.lock(resource),
            value.clone(),
            shared.clone(),
            margin,
        ));
        Self {
            cluster: cluster.clone(),
            resource: resource.to_owned(),
            value,
            fence,
            shared,
            renewal,
            done: false,
        }
    }

    /// The fencing token of this grant: larger than every earlier grant's on the same resource.
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// The resource this lease locks.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Fires when the holder should stop and save: a newer request wants the lock (on any
    /// instance), or the lease was lost.
    pub fn stop_signal(&self) -> &CancellationToken {
        &self.shared.stop
    }

    /// Fires when the lease is lost: from then on another holder may exist.
    pub fn lost_signal(&self) -> &CancellationToken {
        &self.shared.lost
    }

    /// Self-fencing check before a write: the lease is not known lost and its local deadline
    /// (last renew sent + TTL − margin, on the monotonic clock) has not passed.
    pub fn is_held(&self) -> bool {
        let until = *self
            .shared
            .valid_until
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        !self.shared.lost.is_cancelled() && Instant::now() < until
    }

    /// [`Self::is_held`] as a result, for `?`.
    pub fn check(&self) -> Result<()> {
        if self.is_held() {
            Ok(())
        } else {
            Err(ClusterError::LeaseLost)
        }
    }

    /// Writes `fields` into the resource's fenced record, only if this grant still holds the
    /// lock in Redis at that instant (checked in the same script), and records the fence.
    /// [`ClusterError::LeaseLost`] otherwise. The record expires `ttl` after the last write.
    pub async fn write_fenced(&self, fields: &[(&str, &str)], ttl: Duration) -> Result<()> {
        self.check()?;
        let keys = &self.cluster.inner.keys;
        let ttl_ms = ms(ttl);
        let mut args: Vec<&dyn crate::cluster::ToRedisArgsDyn> =
            vec![&self.value, &self.fence, &ttl_ms];
        for (field, value) in fields {
            args.push(field);
            args.push(value);
        }
        let written: i64 = self
            .cluster
            .eval(
                &scripts()[3],
                &[&keys.lock(&self.resource), &keys.fenced(&self.resource)],
                &args,
            )
            .await?;
        if written == 1 {
            Ok(())
        } else {
            mark_lost(&self.cluster, &self.shared);
            Err(ClusterError::LeaseLost)
        }
    }

    /// Releases the lock now; true if it was still ours. Waiters are woken by the notice.
    pub async fn release(mut self) -> Result<bool> {
        self.finish();
        release_value(&self.cluster, &self.resource, &self.value).await
    }

    /// Stops renewing and forgets the lease without releasing it: the key expires after its TTL,
    /// as after a crash. For tests of that path.
    pub fn forget(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.renewal.abort();
        let inner = &self.cluster.inner;
        inner
            .holders
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.value);
        inner.counters.leases_held.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.finish();
        if self.cluster.is_halted() {
            return;
        }
        let (cluster, resource, value) = (
            self.cluster.clone(),
            self.resource.clone(),
            self.value.clone(),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(err) = release_value(&cluster, &resource, &value).await {
                    tracing::warn!(%resource, error = %err, "lease release failed; it will expire");
                }
            });
        }
    }
}

async fn release_value(cluster: &Cluster, resource: &str, value: &str) -> Result<bool> {
    let keys = &cluster.inner.keys;
    let released: i64 = cluster
        .eval(
            &scripts()[2],
            &[&keys.lock(resource), &keys.released(resource)],
            &[&value],
        )
        .await?;
    Ok(released == 1)
}

fn mark_lost(cluster: &Cluster, shared: &Shared) {
    if !shared.lost.is_cancelled() {
        cluster
            .inner
            .counters
            .leases_lost
            .fetch_add(1, Ordering::Relaxed);
    }
    shared.lost.cancel();
    shared.stop.cancel();
}

/// Renews every `lock_renew`; declares the lease lost when Redis refuses or the deadline passes.
async fn renew(
    cluster: Cluster,
    key: String,
    value: String,
    shared: Arc<Shared>,
    margin: Duration,
) {
    let config = cluster.inner.config.clone();
    let halt = cluster.inner.halt.clone();
    let mut next = Instant::now() + config.lock_renew;
    loop {
        let until = *shared.valid_until.lock().unwrap_or_else(|p| p.into_inner());
        tokio::select! {
            () = halt.cancelled() => return,
            () = tokio::time::sleep_until(until.into()) => {
                mark_lost(&cluster, &shared);
                return;
            }
            () = tokio::time::sleep_until(next.into()) => {}
        }
        let sent = Instant::now();
        next = sent + config.lock_renew;
        let ttl_ms = ms(config.lock_ttl);
        let (keys, args): ([&str; 1], [&dyn crate::cluster::ToRedisArgsDyn; 2]) =
            ([&key], [&value, &ttl_ms]);
        let attempt = cluster.eval::<i64>(&scripts()[1], &keys, &args);
        tokio::select! {
            () = halt.cancelled() => return,
            () = tokio::time::sleep_until(until.into()) => {
                mark_lost(&cluster, &shared);
                return;
            }
            result = attempt => match result {
                Ok(1) => {
                    *shared.valid_until.lock().unwrap_or_else(|p| p.into_inner()) =
                        sent + config.lock_ttl - margin;
                }
                Ok(_) => {
                    mark_lost(&cluster, &shared);
                    return;
                }
                // Redis unreachable: keep trying until the deadline.
                Err(_) => next = Instant::now() + config.lock_renew.min(Duration::from_millis(250)),
            }
        }
    }
}
