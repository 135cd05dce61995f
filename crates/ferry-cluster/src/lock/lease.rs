//! Holding a lock: a [`Lease`] renews itself in the background, knows when it may no longer act
//! (renew refused, or its local deadline passed), writes fenced records only while it holds the
//! lock in Redis, and releases the lock when dropped.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Holder;
use super::scripts::scripts;
use crate::clock::ms;
use crate::cluster::{Cluster, ToRedisArgsDyn};
use crate::error::{ClusterError, Result};

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
    pub(super) fn start(cluster: &Cluster, resource: &str, value: String, sent: Instant) -> Self {
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
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![&self.value, &self.fence, &ttl_ms];
        for (field, value) in fields {
            args.push(field);
            args.push(value);
        }
        let written: i64 = self
            .cluster
            .eval(
                &scripts().write_fenced,
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
            &scripts().release,
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
        let (keys, args): ([&str; 1], [&dyn ToRedisArgsDyn; 2]) = ([&key], [&value, &ttl_ms]);
        let attempt = cluster.eval::<i64>(&scripts().renew, &keys, &args);
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
