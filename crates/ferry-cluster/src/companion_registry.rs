//! The companion's transfer registry on Redis ([`ferry_companion::registry::Registry`] over
//! [`TransferRegistry`] and the progress [`Topics`]).
//!
//! - A transfer registered here is owned here: a task per transfer (its *keeper*) publishes the
//!   job's frames to the token's topic, records its checkpoint hints in the transfer's record,
//!   turns the fleet's wishes (pause, resume, cancel, socket seen) into the job's control, and
//!   at the end finishes the record, or hands it over at shutdown.
//! - A progress socket on another instance gets a stand-in job fed from the topic; its asks go
//!   to the record, and from there to the owner.
//! - Every instance runs a reaper: a transfer whose owner fell silent for `--transfer-takeover`
//!   (or handed it over) is claimed, rebuilt from its spec and resumed from its checkpoint.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use ferry_companion::AppState;
use ferry_companion::CompanionError;
use ferry_companion::jobs::{Ask, Control, Job, Outcome, error_frame};
use ferry_companion::registry::{Registry, TransferSpec, new_token};
use ferry_companion::transfer::{Resumed, resume};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::cluster::Cluster;
use crate::error::ClusterError;
use crate::replay::{TopicStream, Topics};
use crate::transfers::{
    Claimed, Control as FleetControl, Desired, Directives, OwnedTransfer, TransferRegistry,
};

/// Most transfers claimed in one reaper round.
const CLAIMS_PER_ROUND: usize = 16;

/// The fleet's transfer registry, as the companion sees it.
/// Cheap to clone: clones share the table of owned jobs.
#[derive(Debug, Clone)]
pub struct RedisRegistry {
    transfers: TransferRegistry,
    progress: Topics,
    /// Jobs of the transfers this instance owns.
    owned: Arc<Mutex<HashMap<String, Arc<Job>>>>,
    /// How long a finished transfer's record stays readable.
    keep: Duration,
}

fn unavailable(error: &ClusterError) -> CompanionError {
    tracing::warn!(%error, "redis unavailable for a transfer");
    CompanionError::Unavailable(
        "transfers are unavailable: the instances cannot reach their shared Redis".into(),
    )
}

impl RedisRegistry {
    /// The registry of `cluster`; finished records stay `keep`.
    pub fn new(cluster: &Cluster, keep: Duration) -> Self {
        Self {
            transfers: cluster.transfers(),
            progress: cluster.progress(),
            owned: Arc::default(),
            keep,
        }
    }

    fn owned(&self) -> MutexGuard<'_, HashMap<String, Arc<Job>>> {
        // A map of handles: a holder's panic cannot leave it inconsistent.
        self.owned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes `transfer` (owned here) a job, kept by its own task until the run ends.
    fn adopt(&self, transfer: OwnedTransfer, owner: Option<String>) -> Arc<Job> {
        let (relay, asks) = mpsc::unbounded_channel();
        let job = Arc::new(Job::relayed(owner, relay));
        apply(&job, *transfer.directives().borrow());
        // What the record already holds is not written back when the keeper starts watching.
        job.hints
            .send_replace(transfer.record().hints.clone().into_iter().collect());
        self.owned()
            .insert(transfer.token().to_owned(), job.clone());
        tokio::spawn(self.clone().keep_owned(transfer, job.clone(), asks));
        job
    }

    /// The keeper of a transfer owned here.
    async fn keep_owned(
        self,
        transfer: OwnedTransfer,
        job: Arc<Job>,
        mut asks: mpsc::UnboundedReceiver<Ask>,
    ) {
        let token = transfer.token().to_owned();
        let mut directives = transfer.directives();
        let mut frames = job.frame.subscribe();
        let mut hints = job.hints.subscribe();
        let mut outcome = job.outcome.subscribe();
        let (lost, drain) = (
            transfer.lost_signal().clone(),
            transfer.drain_signal().clone(),
        );
        let (mut is_lost, mut draining) = (false, false);
        let ended = loop {
            tokio::select! {
                Some(ask) = asks.recv() => self.relay(&token, ask).await,
                Ok(()) = directives.changed() => apply(&job, *directives.borrow_and_update()),
                Ok(()) = frames.changed() => {
                    let frame = frames.borrow_and_update().clone();
                    if let Some(frame) = frame
                        && let Err(error) = self.progress.publish(&token, &frame).await
                    {
                        tracing::debug!(%error, "progress frame not shared");
                    }
                }
                Ok(()) = hints.changed() => {
                    let pairs = pairs(&hints.borrow_and_update());
                    if let Err(error) = transfer.checkpoint(None, &borrowed(&pairs)).await {
                        tracing::debug!(%error, "transfer checkpoint not recorded");
                    }
                }
                () = lost.cancelled(), if !is_lost => {
                    is_lost = true;
                    job.control.send_replace(Control::Yield);
                }
                () = drain.cancelled(), if !draining => {
                    draining = true;
                    job.control.send_replace(Control::Yield);
                }
                Ok(()) = outcome.changed() => {
                    if let Some(ended) = *outcome.borrow_and_update() {
                        break ended;
                    }
                }
            }
        };
        let last = job.frame.borrow().clone();
        if !is_lost
            && let Some(frame) = last
            && let Err(error) = self.progress.publish(&token, &frame).await
        {
            tracing::debug!(%error, "last progress frame not shared");
        }
        let pairs = pairs(&job.hints.borrow());
        let hints = borrowed(&pairs);
        let recorded = match ended {
            Outcome::Yielded if is_lost => {
                transfer.forget();
                Ok(())
            }
            Outcome::Yielded => transfer.hand_over(&hints).await,
            Outcome::Succeeded => transfer.finish("succeeded", &hints, self.keep).await,
            Outcome::Cancelled => transfer.finish("canceled", &hints, self.keep).await,
            Outcome::Failed | Outcome::Abandoned => {
                transfer.finish("failed", &hints, self.keep).await
            }
        };
        if let Err(error) = recorded {
            tracing::warn!(%error, ?ended, "the end of a transfer was not recorded");
        }
    }

    /// Sends a socket's ask to the transfer's record (and so to its owner).
    async fn relay(&self, token: &str, ask: Ask) {
        let control = match ask {
            Ask::Pause => FleetControl::Pause,
            Ask::Resume => FleetControl::Resume,
            Ask::Cancel => FleetControl::Cancel,
            Ask::Connected => FleetControl::SocketConnected,
        };
        if let Err(error) = self.transfers.control(token, control).await {
            tracing::warn!(%error, ?ask, "a socket's request did not reach the transfer");
        }
    }

    /// A stand-in for a transfer owned elsewhere: frames from its topic, asks to its record.
    /// Ends when the socket drops the job.
    async fn stand_in(
        self,
        token: String,
        job: Weak<Job>,
        mut asks: mpsc::UnboundedReceiver<Ask>,
        mut frames: TopicStream,
    ) {
        loop {
            tokio::select! {
                ask = asks.recv() => match ask {
                    Some(ask) => self.relay(&token, ask).await,
                    None => return,
                },
                frame = frames.next() => match (frame, job.upgrade()) {
                    (Some(Ok(frame)), Some(job)) => job.publish_text(Arc::from(frame)),
                    (Some(Err(error)), Some(_)) => {
                        tracing::debug!(%error, "progress topic interrupted");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    _ => return,
                },
            }
        }
    }

    /// Runs this instance's reaper: transfers taken over from silent or departed instances are
    /// resumed here on `state`. Abort (and await) the returned handle before handing over at
    /// shutdown, so this instance does not claim back what it hands over.
    pub fn spawn_takeovers(&self, state: AppState, every: Duration) -> JoinHandle<()> {
        let registry = self.clone();
        tokio::spawn(async move {
            let mut claims = loop {
                match registry
                    .transfers
                    .spawn_reaper(every, CLAIMS_PER_ROUND)
                    .await
                {
                    Ok(claims) => break claims,
                    Err(error) => {
                        tracing::warn!(%error, "transfer reaper not started; retrying");
                        tokio::time::sleep(every).await;
                    }
                }
            };
            while let Some(claimed) = claims.recv().await {
                registry.take_over(&state, claimed).await;
            }
        })
    }

    async fn take_over(&self, state: &AppState, claimed: Claimed) {
        match claimed {
            Claimed::Owned(transfer) => {
                let record = transfer.record().clone();
                let Ok(spec) = serde_json::from_str::<TransferSpec>(&record.request) else {
                    tracing::warn!("a transfer taken over has an unreadable spec; failing it");
                    self.fail(&record.token, "Upload error").await;
                    let _ = transfer.finish("failed", &[], self.keep).await;
                    return;
                };
                tracing::info!(
                    attempts = record.attempts,
                    "taking over a transfer from another instance"
                );
                let job = self.adopt(transfer, spec.owner.clone());
                tokio::spawn(resume(
                    state.clone(),
                    Resumed {
                        token: record.token,
                        job,
                        spec,
                        hints: record.hints.into_iter().collect(),
                    },
                ));
            }
            Claimed::Failed(record) => {
                self.fail(
                    &record.token,
                    "Upload error: the transfer was interrupted too often",
                )
                .await;
            }
        }
    }

    async fn fail(&self, token: &str, message: &str) {
        if let Err(error) = self
            .progress
            .publish(token, &error_frame(message).to_string())
            .await
        {
            tracing::debug!(%error, "failure not shared");
        }
    }
}

#[async_trait::async_trait]
impl Registry for RedisRegistry {
    async fn register(&self, spec: &TransferSpec) -> Result<(String, Arc<Job>), CompanionError> {
        let request = serde_json::to_string(spec)
            .map_err(|e| CompanionError::Internal(format!("transfer spec: {e}")))?;
        let token = new_token();
        let transfer = self
            .transfers
            .register(&token, &request, "running")
            .await
            .map_err(|e| unavailable(&e))?;
        let job = self.adopt(transfer, spec.owner.clone());
        Ok((token, job))
    }

    async fn attach(&self, token: &str) -> Result<Option<Arc<Job>>, CompanionError> {
        if let Some(job) = self.owned().get(token) {
            return Ok(Some(job.clone()));
        }
        let Some(record) = self
            .transfers
            .get(token)
            .await
            .map_err(|e| unavailable(&e))?
        else {
            return Ok(None);
        };
        let owner = serde_json::from_str::<TransferSpec>(&record.request)
            .ok()
            .and_then(|spec| spec.owner);
        let frames = self
            .progress
            .subscribe(token)
            .await
            .map_err(|e| unavailable(&e))?;
        let (relay, asks) = mpsc::unbounded_channel();
        let job = Arc::new(Job::relayed(owner, relay));
        if let Some(error) = &record.last_error {
            job.publish(&error_frame(&format!("Upload error: {error}")));
        }
        tokio::spawn(
            self.clone()
                .stand_in(token.to_owned(), Arc::downgrade(&job), asks, frames),
        );
        Ok(Some(job))
    }

    fn remove(&self, token: &str) {
        self.owned().remove(token);
    }
}

/// The fleet's wishes as the job's control (a yield or a cancel is final).
fn apply(job: &Job, directives: Directives) {
    if directives.socket_seen {
        job.connected
            .send_if_modified(|seen| !std::mem::replace(seen, true));
    }
    let wanted = match directives.desired {
        Desired::Run => Control::Run,
        Desired::Pause => Control::Pause,
        Desired::Cancel => Control::Cancel,
    };
    job.control.send_if_modified(|now| {
        if matches!(*now, Control::Yield | Control::Cancel) || *now == wanted {
            return false;
        }
        *now = wanted;
        true
    });
}

fn pairs(hints: &ferry_companion::jobs::Hints) -> Vec<(String, String)> {
    hints.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn borrowed(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}
