//! Topics with replay: progress frames per transfer token and OAuth tokens per auth-callback id.
//! A publisher sends each message on the topic's channel and keeps it as the topic's last message
//! (`SET … EX`), in one round trip. A listener on any instance subscribes first, then reads the
//! last message, so it never misses the state at the time it connected; after a reconnect of the
//! subscriber it reads the last message again (pub/sub drops what was sent during the gap).
//!
//! Messages travel in a small envelope (publisher, sequence, send time) so a listener skips a
//! live copy of what it just replayed and `/metrics` can report the publish-to-receive lag.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::now_ms;
use crate::cluster::Cluster;
use crate::error::Result;
use crate::pubsub::{HubEvent, Subscription};

/// Sequence numbers of this process's messages (publisher = instance id, so unique per sender).
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

struct Envelope<'a> {
    publisher: &'a str,
    seq: u64,
    sent_ms: u64,
    payload: &'a str,
}

impl<'a> Envelope<'a> {
    fn parse(raw: &'a str) -> Option<Self> {
        let mut parts = raw.splitn(4, '\t');
        Some(Self {
            publisher: parts.next()?,
            seq: parts.next()?.parse().ok()?,
            sent_ms: parts.next()?.parse().ok()?,
            payload: parts.next()?,
        })
    }
}

/// A family of replayed topics (from [`Cluster::progress`] or [`Cluster::auth_handoff`]).
#[derive(Debug, Clone)]
pub struct Topics {
    cluster: Cluster,
    kind: &'static str,
    keep: Duration,
}

impl Cluster {
    /// Progress frames per transfer token (last frame kept 10 minutes for reconnects).
    pub fn progress(&self) -> Topics {
        Topics {
            cluster: self.clone(),
            kind: "ev",
            keep: Duration::from_secs(600),
        }
    }

    /// OAuth tokens per auth-callback id (kept 60 seconds for a socket that connects late).
    pub fn auth_handoff(&self) -> Topics {
        Topics {
            cluster: self.clone(),
            kind: "auth",
            keep: Duration::from_secs(60),
        }
    }
}

impl Topics {
    /// Sends `message` to every listener of `id` on any instance and keeps it as the last one.
    pub async fn publish(&self, id: &str, message: &str) -> Result<()> {
        let keys = &self.cluster.inner.keys;
        let envelope = format!(
            "{}\t{}\t{}\t{message}",
            self.cluster.inner.instance,
            SEQUENCE.fetch_add(1, Ordering::Relaxed) + 1,
            now_ms()
        );
        let mut pipe = redis::pipe();
        pipe.cmd("PUBLISH")
            .arg(keys.topic(self.kind, id))
            .arg(&envelope)
            .ignore()
            .cmd("SET")
            .arg(keys.topic_last(self.kind, id))
            .arg(&envelope)
            .arg("PX")
            .arg(u64::try_from(self.keep.as_millis()).unwrap_or(u64::MAX))
            .ignore();
        self.cluster.pipe::<()>(&pipe).await
    }

    /// The last message of `id`, if it is still kept.
    pub async fn last(&self, id: &str) -> Result<Option<String>> {
        let raw = self.last_raw(id).await?;
        Ok(raw
            .as_deref()
            .and_then(Envelope::parse)
            .map(|e| e.payload.to_owned()))
    }

    async fn last_raw(&self, id: &str) -> Result<Option<String>> {
        let key = self.cluster.inner.keys.topic_last(self.kind, id);
        self.cluster.query(redis::cmd("GET").arg(key)).await
    }

    /// Forgets the last message of `id` (e.g. after a retried upload got a new token).
    pub async fn clear(&self, id: &str) -> Result<()> {
        let key = self.cluster.inner.keys.topic_last(self.kind, id);
        self.cluster.query(redis::cmd("DEL").arg(key)).await
    }

    /// Listens to `id`: first the last message (if kept), then every new one.
    pub async fn subscribe(&self, id: &str) -> Result<TopicStream> {
        let inner = &self.cluster.inner;
        let subscription = inner
            .hub
            .subscribe(
                &inner.keys.topic(self.kind, id),
                inner.config.connect_timeout * 2,
            )
            .await?;
        let mut stream = TopicStream {
            topics: self.clone(),
            id: id.to_owned(),
            subscription,
            seen: None,
            pending: VecDeque::new(),
        };
        stream.replay().await?;
        Ok(stream)
    }
}

/// A listener on one topic. Dropping it unsubscribes (if it was the last local listener).
pub struct TopicStream {
    topics: Topics,
    id: String,
    subscription: Subscription,
    /// Publisher and sequence of the newest message handed out.
    seen: Option<(String, u64)>,
    pending: VecDeque<String>,
}

impl std::fmt::Debug for TopicStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicStream")
            .field("kind", &self.topics.kind)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl TopicStream {
    /// The next message; `None` once the instance was halted. After a subscriber reconnect it
    /// yields the kept last message if it is newer than what was handed out.
    pub async fn next(&mut self) -> Option<Result<String>> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Some(Ok(message));
            }
            match self.subscription.recv().await? {
                HubEvent::Message(raw) => {
                    if let Some(envelope) = Envelope::parse(&raw) {
                        let lag = now_ms().saturating_sub(envelope.sent_ms);
                        self.topics.cluster.inner.counters.lag(lag);
                        self.accept(&envelope);
                    }
                }
                HubEvent::Resubscribed => {
                    if let Err(err) = self.replay().await {
                        return Some(Err(err));
                    }
                }
            }
        }
    }

    async fn replay(&mut self) -> Result<()> {
        if let Some(raw) = self.topics.last_raw(&self.id).await?
            && let Some(envelope) = Envelope::parse(&raw)
        {
            self.accept(&envelope);
        }
        Ok(())
    }

    /// Queues a message unless it is one already handed out (or older, from the same publisher).
    fn accept(&mut self, envelope: &Envelope<'_>) {
        let stale = self.seen.as_ref().is_some_and(|(publisher, seq)| {
            publisher == envelope.publisher && envelope.seq <= *seq
        });
        if !stale {
            self.seen = Some((envelope.publisher.to_owned(), envelope.seq));
            self.pending.push_back(envelope.payload.to_owned());
        }
    }
}
