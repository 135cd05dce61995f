//! [`RedisAssemblies`]: ferry-process's [`Fleet`] on the transfer registry, so each Assembly's
//! run is claimed by exactly one instance, taken over when that instance falls silent, and
//! stopped from any instance. It runs on a [`Cluster`] of its own prefix (`{prefix}asm:`), so the
//! companion's reaper never sees an Assembly and this one never sees a transfer.
//!
//! An Assembly's run is a transfer record named by the Assembly id: registered when it starts
//! executing (the one instance whose registration succeeds runs it), heartbeated while it runs,
//! claimed by another instance's reaper after `--transfer-takeover` of silence, finished when the
//! run ends. A cancel is the registry's `Control::Cancel`, which reaches the owner by pub/sub and,
//! if that message is lost, by its heartbeat's re-read.
//!
//! The per-client caps it hands the service ([`Fleet::caps`]) are [`RedisCaps`], on the same
//! prefix.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use ferry_process::fleet::{Claim, Fleet, Takeover};
use ferry_process::id::Id;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::assembly_caps::RedisCaps;
use crate::cluster::Cluster;
use crate::error::ClusterError;
use crate::transfers::{Claimed, Control, Desired, OwnedTransfer};

/// How long a finished run's record stays (late cancels then find it ended).
const KEEP_FINISHED: Duration = Duration::from_secs(3600);
/// Runs claimed per reaper round.
const CLAIMS_PER_ROUND: usize = 8;

/// The fleet's Assembly runs in Redis, and its per-client counts ([`RedisCaps`]).
#[derive(Debug, Clone)]
pub struct RedisAssemblies {
    cluster: Cluster,
    caps: Arc<RedisCaps>,
}

impl RedisAssemblies {
    /// Over `cluster`, which should have a prefix of its own (see the module's doc).
    pub fn new(cluster: &Cluster) -> Self {
        Self {
            cluster: cluster.clone(),
            caps: Arc::new(RedisCaps::new(cluster)),
        }
    }
}

fn io_error(e: &ClusterError) -> io::Error {
    io::Error::other(e.to_string())
}

#[async_trait]
impl Fleet for RedisAssemblies {
    async fn claim(&self, id: &Id) -> io::Result<Option<Box<dyn Claim>>> {
        match self
            .cluster
            .transfers()
            .register(id.as_str(), "", "running")
            .await
        {
            Ok(owned) => Ok(Some(Box::new(RedisClaim::new(owned)))),
            Err(ClusterError::AlreadyRegistered) => Ok(None),
            Err(e) => Err(io_error(&e)),
        }
    }

    async fn cancel(&self, id: &Id) -> io::Result<()> {
        self.cluster
            .transfers()
            .control(id.as_str(), Control::Cancel)
            .await
            .map(drop)
            .map_err(|e| io_error(&e))
    }

    async fn takeovers(&self) -> io::Result<mpsc::Receiver<Takeover>> {
        let window = self.cluster.config().transfer_takeover;
        // As the companion's reaper: 4 looks per window keep a takeover within 1.25 windows.
        let every = (window / 4).clamp(Duration::from_millis(250), Duration::from_secs(5));
        let mut claims = self
            .cluster
            .transfers()
            .spawn_reaper(every, CLAIMS_PER_ROUND)
            .await
            .map_err(|e| io_error(&e))?;
        let (sender, receiver) = mpsc::channel(CLAIMS_PER_ROUND);
        tokio::spawn(async move {
            while let Some(claimed) = claims.recv().await {
                let takeover = match claimed {
                    Claimed::Owned(owned) => match Id::parse(owned.token()) {
                        Some(id) => Takeover::Run(id, Box::new(RedisClaim::new(owned))),
                        None => {
                            let _ = owned.finish("failed", &[], KEEP_FINISHED).await;
                            continue;
                        }
                    },
                    Claimed::Failed(record) => match Id::parse(&record.token) {
                        Some(id) => Takeover::GaveUp(id),
                        None => continue,
                    },
                };
                if sender.send(takeover).await.is_err() {
                    return;
                }
            }
        });
        Ok(receiver)
    }

    fn caps(&self) -> Option<Arc<dyn ferry_process::upkeep::shared::SharedCaps>> {
        Some(self.caps.clone())
    }
}

/// One run owned here: the registry's ownership, and a watcher turning a cancel (or the loss
/// of the ownership) into the run's stop signal.
#[derive(Debug)]
struct RedisClaim {
    owned: OwnedTransfer,
    stop: CancellationToken,
    canceled: Arc<AtomicBool>,
    watcher: tokio::task::JoinHandle<()>,
}

impl RedisClaim {
    fn new(owned: OwnedTransfer) -> Self {
        let stop = CancellationToken::new();
        let canceled = Arc::new(AtomicBool::new(false));
        let mut directives = owned.directives();
        let lost = owned.lost_signal().clone();
        let watcher = {
            let (stop, canceled) = (stop.clone(), canceled.clone());
            tokio::spawn(async move {
                loop {
                    if directives.borrow_and_update().desired == Desired::Cancel {
                        canceled.store(true, Ordering::SeqCst);
                        stop.cancel();
                        return;
                    }
                    tokio::select! {
                        () = lost.cancelled() => {
                            stop.cancel();
                            return;
                        }
                        changed = directives.changed() => if changed.is_err() { return },
                    }
                }
            })
        };
        Self {
            owned,
            stop,
            canceled,
            watcher,
        }
    }
}

#[async_trait]
impl Claim for RedisClaim {
    fn stop(&self) -> CancellationToken {
        self.stop.clone()
    }

    fn canceled(&self) -> bool {
        self.canceled.load(Ordering::SeqCst)
    }

    async fn finish(self: Box<Self>, outcome: &str) {
        let Self { owned, watcher, .. } = *self;
        watcher.abort();
        let token = owned.token().to_owned();
        if let Err(e) = owned.finish(outcome, &[], KEEP_FINISHED).await {
            tracing::warn!(assembly = %token, error = %e, "an assembly's run ended after its claim was lost");
        }
    }
}
