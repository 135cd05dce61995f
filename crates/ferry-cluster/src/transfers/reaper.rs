//! The reaper: every instance looks for transfers whose owner fell silent for the takeover window
//! (or handed them over) and claims them with `XAUTOCLAIM`; a script then checks the owner's
//! lease, counts the attempt and bumps the epoch. A transfer claimed too often is failed.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;

use super::owned::OwnedTransfer;
use super::record::{TransferRecord, pairs_to_map};
use super::scripts::scripts;
use super::{Claimed, GROUP, MAX_ATTEMPTS, RECORD_TTL_MS, TransferRegistry};
use crate::clock::{ms, now_ms};
use crate::error::{ClusterError, Result};

impl TransferRegistry {
    /// Claims up to `limit` transfers whose owner has been silent for `transfer_takeover` (or
    /// handed them over), bumping their epoch. Entries whose owner still holds its lease are
    /// given back to it untouched.
    pub async fn claim_stale(&self, limit: usize) -> Result<Vec<Claimed>> {
        let inner = &self.cluster.inner;
        let stream = inner.keys.transfer_stream();
        let mut claimed = Vec::new();
        let mut cursor = "0-0".to_owned();
        let mut remaining = limit;
        while remaining > 0 {
            let reply: redis::Value = match self
                .cluster
                .query(
                    redis::cmd("XAUTOCLAIM")
                        .arg(&stream)
                        .arg(GROUP)
                        .arg(&inner.instance)
                        .arg(ms(inner.config.transfer_takeover))
                        .arg(&cursor)
                        .arg("COUNT")
                        .arg(remaining)
                        .arg("JUSTID"),
                )
                .await
            {
                Ok(reply) => reply,
                // No stream or group yet: nothing to claim.
                Err(ClusterError::Unavailable(e)) if e.code() == Some("NOGROUP") => break,
                Err(e) => return Err(e),
            };
            let (next, ids) = parse_autoclaim(reply)?;
            for id in ids {
                remaining = remaining.saturating_sub(1);
                if let Some(found) = self.claim_entry(&id).await? {
                    claimed.push(found);
                }
            }
            if next == "0-0" {
                break;
            }
            cursor = next;
        }
        Ok(claimed)
    }

    async fn claim_entry(&self, id: &str) -> Result<Option<Claimed>> {
        let inner = &self.cluster.inner;
        let stream = inner.keys.transfer_stream();
        let fields: HashMap<String, String> = match self
            .cluster
            .query::<Vec<(String, HashMap<String, String>)>>(
                redis::cmd("XRANGE").arg(&stream).arg(id).arg(id),
            )
            .await?
            .pop()
        {
            Some((_, fields)) => fields,
            None => HashMap::new(),
        };
        let Some(token) = fields.get("token") else {
            // A deleted entry: acknowledge it away.
            let _: i64 = self
                .cluster
                .query(redis::cmd("XACK").arg(&stream).arg(GROUP).arg(id))
                .await?;
            return Ok(None);
        };
        let [stream, record, lease] = self.keys3(token);
        let (lease_ms, now) = (ms(inner.config.transfer_lease()), now_ms());
        let (code, flat): (i64, Vec<String>) = self
            .cluster
            .eval(
                &scripts().claim,
                &[&stream, &record, &lease],
                &[
                    &GROUP,
                    &inner.instance,
                    &id,
                    &lease_ms,
                    &RECORD_TTL_MS,
                    &MAX_ATTEMPTS,
                    &now,
                ],
            )
            .await?;
        let record = TransferRecord::from_map(token, pairs_to_map(flat));
        Ok(match code {
            1 => {
                inner.counters.takeovers.fetch_add(1, Ordering::Relaxed);
                Some(Claimed::Owned(
                    OwnedTransfer::start(self, record, id.to_owned()).await,
                ))
            }
            4 => Some(Claimed::Failed(record)),
            _ => None,
        })
    }

    /// Runs a reaper: every `every` (± 20 % jitter), and at once when another instance hands a
    /// transfer over, claims stale transfers and sends them on the returned channel (at most
    /// `limit` per round). Stops when the receiver is dropped or the instance halts; what it
    /// claimed but could no longer deliver is handed over again.
    pub async fn spawn_reaper(
        &self,
        every: Duration,
        limit: usize,
    ) -> Result<mpsc::Receiver<Claimed>> {
        let inner = &self.cluster.inner;
        let mut wake = inner
            .hub
            .subscribe(
                &inner.keys.transfer_wake(),
                inner.config.connect_timeout * 2,
            )
            .await?;
        let (sender, receiver) = mpsc::channel(limit.max(1));
        let registry = self.clone();
        let halt = inner.halt.clone();
        tokio::spawn(async move {
            loop {
                let jitter = every.mul_f64(rand::random_range(0.8..1.2));
                tokio::select! {
                    () = halt.cancelled() => return,
                    () = sender.closed() => return,
                    () = tokio::time::sleep(jitter) => {}
                    event = wake.recv() => if event.is_none() { return },
                }
                // The instance stopped taking transfers (it is shutting down): its own
                // hand-over wakes this reaper, which must not claim them back.
                if sender.is_closed() {
                    return;
                }
                match registry.claim_stale(limit).await {
                    Ok(found) => {
                        let mut found = found.into_iter();
                        while let Some(claimed) = found.next() {
                            if let Err(refused) = sender.send(claimed).await {
                                // Closed during the claim: give these back at once.
                                for claimed in std::iter::once(refused.0).chain(found) {
                                    if let Claimed::Owned(owned) = claimed {
                                        let _ = owned.hand_over(&[]).await;
                                    }
                                }
                                return;
                            }
                        }
                    }
                    Err(err) => tracing::debug!(error = %err, "transfer reaper round failed"),
                }
            }
        });
        Ok(receiver)
    }
}

fn parse_autoclaim(reply: redis::Value) -> Result<(String, Vec<String>)> {
    use redis::FromRedisValue;
    let bad = || ClusterError::Protocol("XAUTOCLAIM reply".to_owned());
    let redis::Value::Array(mut parts) = reply else {
        return Err(bad());
    };
    if parts.len() < 2 {
        return Err(bad());
    }
    let ids = Vec::<String>::from_redis_value(parts.remove(1)).map_err(|_| bad())?;
    let next = String::from_redis_value(parts.remove(0)).map_err(|_| bad())?;
    Ok((next, ids))
}
