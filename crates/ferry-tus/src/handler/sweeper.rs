//! Expiration: a background task that terminates unfinished uploads nobody touched for the
//! configured expiry, reclaiming their storage.

use std::time::Duration;

use tokio::task::JoinHandle;

use super::state::TusState;
use crate::store::now_secs;

impl TusState {
    /// Terminates every unfinished upload whose expiry is at or before `now` (Unix seconds)
    /// and returns how many went. Uploads with a request in flight are left for the next round.
    pub async fn sweep(&self, now: u64) -> usize {
        let Some(expiry) = self.expiry() else {
            return 0;
        };
        let (Some(expire), Some(terminate)) =
            (self.store().as_expire(), self.store().as_terminate())
        else {
            return 0;
        };
        let cutoff = now.saturating_sub(expiry.as_secs()).saturating_add(1);
        let stale = match expire.stale(cutoff).await {
            Ok(stale) => stale,
            Err(e) => {
                tracing::error!(error = %e, "cannot list expired uploads");
                return 0;
            }
        };
        let mut swept = 0;
        for id in stale {
            let _lease = match self.lock().try_acquire(&id).await {
                Ok(Some(lease)) => lease,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(upload = %id, error = %e, "cannot lock an expired upload");
                    continue;
                }
            };
            match terminate.terminate(&id).await {
                Ok(()) => {
                    tracing::info!(upload = %id, "expired upload reclaimed");
                    swept += 1;
                }
                Err(e) => tracing::warn!(upload = %id, error = %e, "cannot reclaim upload"),
            }
        }
        swept
    }

    /// Runs [`TusState::sweep`] periodically (a tenth of the expiry, between 1 s and 5 min),
    /// or returns `None` when nothing expires.
    pub fn spawn_sweeper(&self) -> Option<JoinHandle<()>> {
        let expiry = self.expiry()?;
        let period = (expiry / 10).clamp(Duration::from_secs(1), Duration::from_secs(300));
        let state = self.clone();
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                state.sweep(now_secs()).await;
            }
        }))
    }
}
