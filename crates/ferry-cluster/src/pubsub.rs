//! One shared subscriber connection per instance. Callers subscribe to exact channels (never
//! patterns); the hub keeps one Redis subscription per channel however many local listeners it
//! has, fans messages out through a `broadcast` per channel, and drops the Redis subscription
//! when the last listener goes. When the connection breaks it reconnects, re-subscribes every
//! channel and tells every listener [`HubEvent::Resubscribed`]: pub/sub is at-most-once, so
//! listeners re-read whatever state they follow (messages sent during the gap are gone).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use redis::Client;
use redis::aio::PubSubSink;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::{ClusterError, Result};
use crate::figures::Counters;

/// Messages queued per channel for a slow listener before it starts losing the oldest.
const PER_CHANNEL: usize = 256;

/// What a listener receives.
#[derive(Debug, Clone)]
pub(crate) enum HubEvent {
    /// A message's payload.
    Message(Arc<str>),
    /// The connection came back and the channel is subscribed again; messages may have been lost.
    Resubscribed,
}

enum Command {
    Subscribe(String, oneshot::Sender<redis::RedisResult<()>>),
    Unsubscribed(String),
}

type Channels = Arc<Mutex<HashMap<String, broadcast::Sender<HubEvent>>>>;

/// The handle to the instance's subscriber task.
#[derive(Clone)]
pub(crate) struct Hub {
    commands: mpsc::UnboundedSender<Command>,
    channels: Channels,
}

/// A local listener on one channel; unsubscribes (if it was the last) when dropped.
pub(crate) struct Subscription {
    channel: String,
    receiver: broadcast::Receiver<HubEvent>,
    hub: Hub,
}

impl Subscription {
    /// The next event; `None` once the hub stopped (the instance was halted).
    pub(crate) async fn recv(&mut self) -> Option<HubEvent> {
        match self.receiver.recv().await {
            Ok(event) => Some(event),
            // A listener that fell behind re-reads state like after a reconnect.
            Err(broadcast::error::RecvError::Lagged(_)) => Some(HubEvent::Resubscribed),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = self
            .hub
            .commands
            .send(Command::Unsubscribed(std::mem::take(&mut self.channel)));
    }
}

impl Hub {
    /// Starts the subscriber task; it connects (and reconnects) on its own.
    pub(crate) fn start(
        client: Client,
        connect_timeout: Duration,
        counters: Arc<Counters>,
        halt: CancellationToken,
    ) -> Self {
        let (commands, receiver) = mpsc::unbounded_channel();
        let channels = Channels::default();
        let task = Task {
            client,
            connect_timeout,
            counters,
            channels: channels.clone(),
            commands: receiver,
        };
        tokio::spawn(async move {
            tokio::select! {
                () = halt.cancelled() => {}
                () = task.run() => {}
            }
        });
        Self { commands, channels }
    }

    /// Subscribes to `channel` and returns once Redis confirmed the subscription, so a caller can
    /// subscribe first and then read state without missing a message published in between.
    pub(crate) async fn subscribe(
        &self,
        channel: &str,
        deadline: Duration,
    ) -> Result<Subscription> {
        let receiver = {
            let mut channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
            channels
                .entry(channel.to_owned())
                .or_insert_with(|| broadcast::channel(PER_CHANNEL).0)
                .subscribe()
        };
        let subscription = Subscription {
            channel: channel.to_owned(),
            receiver,
            hub: self.clone(),
        };
        let (ack, confirmed) = oneshot::channel();
        let closed = || {
            ClusterError::Unavailable(redis::RedisError::from((
                redis::ErrorKind::Io,
                "the subscriber connection is down",
            )))
        };
        self.commands
            .send(Command::Subscribe(channel.to_owned(), ack))
            .map_err(|_| closed())?;
        match tokio::time::timeout(deadline, confirmed).await {
            Ok(Ok(Ok(()))) => Ok(subscription),
            Ok(Ok(Err(err))) => Err(ClusterError::Unavailable(err)),
            Ok(Err(_)) | Err(_) => Err(closed()),
        }
    }
}

struct Task {
    client: Client,
    connect_timeout: Duration,
    counters: Arc<Counters>,
    channels: Channels,
    commands: mpsc::UnboundedReceiver<Command>,
}

impl Task {
    async fn run(mut self) {
        let mut backoff = Duration::from_millis(50);
        let mut ever_connected = false;
        loop {
            let connected =
                tokio::time::timeout(self.connect_timeout, self.client.get_async_pubsub()).await;
            let Ok(Ok(pubsub)) = connected else {
                self.refuse_pending();
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            };
            let (mut sink, mut stream) = pubsub.split();
            let current: Vec<String> = self.lock_channels().keys().cloned().collect();
            if !current.is_empty() && sink.subscribe(&current).await.is_err() {
                continue;
            }
            backoff = Duration::from_millis(50);
            self.counters
                .subscriber_connected
                .store(true, Ordering::Relaxed);
            if ever_connected {
                self.counters
                    .pubsub_reconnects
                    .fetch_add(1, Ordering::Relaxed);
                for sender in self.lock_channels().values() {
                    let _ = sender.send(HubEvent::Resubscribed);
                }
            }
            ever_connected = true;
            loop {
                tokio::select! {
                    message = stream.next() => {
                        let Some(message) = message else { break };
                        let payload: String = message.get_payload().unwrap_or_default();
                        if let Some(sender) = self.lock_channels().get(message.get_channel_name()) {
                            let _ = sender.send(HubEvent::Message(payload.into()));
                        }
                    }
                    command = self.commands.recv() => {
                        let Some(command) = command else { return };
                        if !self.apply(&mut sink, command).await {
                            break;
                        }
                    }
                }
            }
            self.counters
                .subscriber_connected
                .store(false, Ordering::Relaxed);
        }
    }

    fn lock_channels(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<HubEvent>>> {
        self.channels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one command on a live connection; false when the connection failed.
    async fn apply(&mut self, sink: &mut PubSubSink, command: Command) -> bool {
        match command {
            Command::Subscribe(channel, ack) => {
                let result = sink.subscribe(&channel).await;
                let ok = result.is_ok();
                let _ = ack.send(result);
                ok
            }
            Command::Unsubscribed(channel) => {
                let unused = {
                    let mut channels = self.lock_channels();
                    let unused = channels
                        .get(&channel)
                        .is_some_and(|sender| sender.receiver_count() == 0);
                    if unused {
                        channels.remove(&channel);
                    }
                    unused
                };
                !unused || sink.unsubscribe(&channel).await.is_ok()
            }
        }
    }

    /// While disconnected: subscriptions are refused at once, departures just forgotten.
    fn refuse_pending(&mut self) {
        while let Ok(command) = self.commands.try_recv() {
            match command {
                Command::Subscribe(_, ack) => {
                    let _ = ack.send(Err(redis::RedisError::from((
                        redis::ErrorKind::Io,
                        "the subscriber connection is down",
                    ))));
                }
                Command::Unsubscribed(channel) => {
                    let mut channels = self.lock_channels();
                    if channels
                        .get(&channel)
                        .is_some_and(|sender| sender.receiver_count() == 0)
                    {
                        channels.remove(&channel);
                    }
                }
            }
        }
    }
}
