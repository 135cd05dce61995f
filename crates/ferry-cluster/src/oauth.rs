//! Server-side OAuth state shared by the fleet: written at `/connect` on one instance, taken
//! once (`GETDEL`) at the provider's callback on any instance.

use std::time::Duration;

use crate::cluster::Cluster;
use crate::error::Result;

/// One-time OAuth states (from [`Cluster::oauth_states`]).
#[derive(Debug, Clone)]
pub struct OAuthStates {
    cluster: Cluster,
}

impl Cluster {
    /// One-time OAuth states shared by the fleet.
    pub fn oauth_states(&self) -> OAuthStates {
        OAuthStates {
            cluster: self.clone(),
        }
    }
}

impl OAuthStates {
    /// Keeps `value` under `id` for `ttl`.
    pub async fn put(&self, id: &str, value: &str, ttl: Duration) -> Result<()> {
        let key = self.cluster.inner.keys.oauth(id);
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.cluster
            .query(redis::cmd("SET").arg(key).arg(value).arg("PX").arg(ms))
            .await
    }

    /// Returns and deletes the value under `id`; `None` if absent, expired or already taken.
    pub async fn take(&self, id: &str) -> Result<Option<String>> {
        let key = self.cluster.inner.keys.oauth(id);
        self.cluster.query(redis::cmd("GETDEL").arg(key)).await
    }
}
