//! Several instances sharing Assemblies (`--redis-url`). Records and files stay where one
//! instance keeps them, `{data-dir}/assemblies/`, which every instance of a fleet must share (a
//! volume they all mount): any instance then answers any status, file or cancel. What the fleet
//! adds is who runs an Assembly: its run is claimed by exactly one instance when it starts
//! executing, another instance takes the run over when the owner falls silent (the Assembly runs
//! again from its inputs, which are on the shared directory), and a cancel on any instance stops
//! the run where it is. This module is the seam; ferry-cluster implements it on Redis (the
//! transfer registry's claim, heartbeat and takeover), and without a fleet everything stays in
//! process.

use std::fmt;
use std::io;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::assembly::record::State;
use crate::id::Id;
use crate::service::{Inner, Service};

/// How the runs of Assemblies are shared by instances.
#[async_trait]
pub trait Fleet: Send + Sync + fmt::Debug {
    /// Claims the run of Assembly `id` for this instance; `None` when another instance has it.
    async fn claim(&self, id: &Id) -> io::Result<Option<Box<dyn Claim>>>;

    /// Asks the instance running Assembly `id`, wherever it is, to stop the run.
    async fn cancel(&self, id: &Id) -> io::Result<()>;

    /// Runs taken over from silent instances, as they are claimed here.
    async fn takeovers(&self) -> io::Result<mpsc::Receiver<Takeover>>;

    /// The per-client caps counted once for the whole fleet ([`crate::upkeep::shared`]);
    /// `None` leaves each instance counting alone.
    fn caps(&self) -> Option<Arc<dyn crate::upkeep::shared::SharedCaps>> {
        None
    }
}

/// A run claimed from an instance that fell silent.
#[derive(Debug)]
pub enum Takeover {
    /// This instance runs Assembly `id` again from its first step.
    Run(Id, Box<dyn Claim>),
    /// Assembly `id`'s run was taken over too often; it fails with `ASSEMBLY_CRASHED`.
    GaveUp(Id),
}

/// This instance's claim on one run.
#[async_trait]
pub trait Claim: Send + Sync + fmt::Debug {
    /// Fires when the run must stop: canceled on some instance, or the claim was lost.
    fn stop(&self) -> CancellationToken;

    /// Whether the stop was a cancel (rather than a lost claim).
    fn canceled(&self) -> bool;

    /// The run ended (`succeeded`, `failed` or `canceled`); the claim is released.
    async fn finish(self: Box<Self>, outcome: &str);
}

/// The outcome a claim ends with, from the Assembly's state.
fn outcome(state: Option<State>) -> &'static str {
    match state {
        Some(State::Completed) => "succeeded",
        Some(State::Canceled) => "canceled",
        _ => "failed",
    }
}

/// Starts Assembly `id` (already `Executing`) if this instance wins its claim; otherwise the
/// instance that holds it runs it.
pub(crate) fn start(svc: &Service, fleet: Arc<dyn Fleet>, id: Id) {
    let svc = svc.clone();
    tokio::spawn(async move {
        match fleet.claim(&id).await {
            Ok(Some(claim)) => run(&svc, id, claim).await,
            Ok(None) => tracing::debug!(assembly = %id, "another instance runs this assembly"),
            Err(e) => {
                tracing::error!(assembly = %id, error = %e, "cannot claim an assembly's run");
                let message = "The instances running Assemblies could not agree who runs this one (Redis unavailable).";
                let failed = svc
                    .update(&id, |a| {
                        let busy = a.state == State::Executing;
                        if busy {
                            a.fail("ASSEMBLY_CRASHED", message.to_owned(), None);
                        }
                        busy
                    })
                    .await;
                if let Ok(Some((a, true))) = failed {
                    svc.finished(&a);
                }
            }
        }
    });
}

/// Runs Assembly `id` under `claim`, then ends the claim. A cancel from another instance stops
/// the run here; its record is then made canceled here too (the canceling instance wrote it, but
/// a save of this run may have crossed that write on the shared directory).
async fn run(svc: &Service, id: Id, claim: Box<dyn Claim>) {
    svc.run_with(&id, claim.stop()).await;
    if claim.canceled() {
        let canceled = svc
            .update(&id, |a| {
                let busy = a.state.is_busy();
                if busy {
                    a.state = State::Canceled;
                    a.finish_clock();
                }
                busy
            })
            .await;
        if let Ok(Some((a, true))) = canceled {
            svc.finished(&a);
        }
    }
    let state = svc.load(&id).await.ok().flatten().map(|a| a.state);
    claim.finish(outcome(state)).await;
}

/// Takes over runs of silent instances for as long as the service lives.
pub(crate) async fn spawn_takeovers(svc: &Service, fleet: &Arc<dyn Fleet>) -> io::Result<()> {
    let mut claims = fleet.takeovers().await?;
    let weak: Weak<Inner> = Arc::downgrade(&svc.0);
    tokio::spawn(async move {
        while let Some(takeover) = claims.recv().await {
            let Some(inner) = weak.upgrade() else { return };
            let svc = Service(inner);
            match takeover {
                Takeover::Run(id, claim) => take_over(&svc, id, claim).await,
                Takeover::GaveUp(id) => give_up(&svc, &id).await,
            }
        }
    });
    Ok(())
}

async fn take_over(svc: &Service, id: Id, claim: Box<dyn Claim>) {
    let warning = "The instance running this Assembly stopped; another instance ran it again from its first step.";
    let resumed = svc
        .update(&id, |a| {
            let busy = a.state == State::Executing;
            if busy {
                a.results.clear();
                a.warnings.push(warning.to_owned());
            }
            busy
        })
        .await;
    match resumed {
        Ok(Some((a, true))) => {
            tracing::info!(assembly = %id, "took over an assembly whose instance stopped");
            svc.0.upkeep.reown(&a).await;
            let svc = svc.clone();
            tokio::spawn(async move { run(&svc, id, claim).await });
        }
        Ok(Some((a, false))) => claim.finish(outcome(Some(a.state))).await,
        Ok(None) => {
            // Its record is not here: this instance does not share the data directory.
            tracing::error!(
                assembly = %id,
                "took over an assembly whose record is not in this instance's data directory; every instance of a fleet must share --data-dir for Assemblies"
            );
            claim.finish("failed").await;
        }
        Err(e) => {
            tracing::error!(assembly = %id, error = %e, "cannot read a taken-over assembly");
            claim.finish("failed").await;
        }
    }
}

async fn give_up(svc: &Service, id: &Id) {
    let failed = svc
        .update(id, |a| {
            let busy = a.state == State::Executing;
            if busy {
                a.fail(
                    "ASSEMBLY_CRASHED",
                    "The instances running this Assembly stopped too often; it was given up."
                        .to_owned(),
                    None,
                );
            }
            busy
        })
        .await;
    if let Ok(Some((a, true))) = failed {
        svc.finished(&a);
    }
}
