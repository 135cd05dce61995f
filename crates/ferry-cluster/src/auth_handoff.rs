//! The companion's login hand-off on Redis ([`ferry_companion::oauth::handoff::AuthHandoff`]
//! over the auth [`Topics`]): the popup's `/send-token` may reach one instance and the page's
//! auth-callback socket another; the outcome is published on the login's topic and kept a
//! minute for a socket that connects late.

use std::time::Duration;

use ferry_companion::oauth::handoff::{AuthHandoff, Outcome};

use crate::cluster::Cluster;
use crate::replay::Topics;

/// Login outcomes shared by the fleet.
#[derive(Debug)]
pub struct RedisHandoff {
    topics: Topics,
}

impl RedisHandoff {
    /// The hand-off over `cluster`'s auth topics.
    pub fn new(cluster: &Cluster) -> Self {
        Self {
            topics: cluster.auth_handoff(),
        }
    }
}

#[async_trait::async_trait]
impl AuthHandoff for RedisHandoff {
    /// `keep` is the topic's own (a minute): the fleet keeps every login outcome that long.
    async fn publish(&self, id: &str, outcome: Outcome, _keep: Duration) {
        let Ok(text) = serde_json::to_string(&outcome) else {
            return;
        };
        if let Err(error) = self.topics.publish(id, &text).await {
            tracing::warn!(%error, "login outcome not shared: redis unavailable");
        }
    }

    async fn wait(&self, id: &str, wait: Duration) -> Option<Outcome> {
        let mut stream = match self.topics.subscribe(id).await {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%error, "auth socket cannot wait: redis unavailable");
                return None;
            }
        };
        let text = tokio::time::timeout(wait, stream.next())
            .await
            .ok()??
            .ok()?;
        serde_json::from_str(&text).ok()
    }

    async fn delivered(&self, id: &str) {
        if let Err(error) = self.topics.clear(id).await {
            tracing::debug!(%error, "delivered login outcome not cleared");
        }
    }
}
