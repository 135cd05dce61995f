//! The service: the Assemblies on disk, the ones running, the worker pool. Every change to a
//! record goes through [`Service::update`], one at a time, so an upload arriving, a cancel and
//! a step finishing never overwrite each other.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::assembly::record::{Assembly, FileRecord, State};
use crate::assembly::status::Urls;
use crate::assembly::store::Store;
use crate::auth::Credentials;
use crate::id::Id;
use crate::robots::engine::Engines;

/// The service's settings.
#[derive(Clone, Debug)]
pub struct ProcessConfig {
    /// Where Assemblies live (`{data_dir}/assemblies`).
    pub dir: PathBuf,
    /// The Auth Key and, to require signatures, the secret.
    pub credentials: Credentials,
    /// `--assembly-templates`: `{template_id}.json` files.
    pub templates: Option<PathBuf>,
    /// Assemblies executing at once (`--assembly-workers`).
    pub workers: usize,
    /// Longest time one step may run.
    pub step_timeout: Duration,
    /// How clients reach the service.
    pub urls: Urls,
    /// Largest file accepted or produced, in bytes.
    pub max_size: Option<u64>,
    /// The engines found at startup.
    pub engines: Engines,
    /// The outbound client of `/http/import` (public addresses only); `None` disables imports.
    pub egress: Option<Arc<ferry_companion::egress::Egress>>,
    /// Browser origins allowed to call the API (`*`: any).
    pub cors_origins: Vec<String>,
    /// How notifications are retried.
    pub notify: crate::notify::Retry,
    /// Per-client caps, the disk cap, retention and the upload timeout.
    pub quotas: crate::upkeep::caps::Quotas,
    /// The time the upkeep reads (the system's, or a manual one in tests).
    pub clock: crate::upkeep::clock::Clock,
}

/// The processing service; cheap to clone.
#[derive(Clone, Debug)]
pub struct Service(pub(crate) Arc<Inner>);

#[derive(Debug)]
pub(crate) struct Inner {
    pub config: ProcessConfig,
    pub store: Store,
    /// Serialises read-modify-write of records.
    write: tokio::sync::Mutex<()>,
    /// Cancel tokens of the Assemblies queued or running here.
    running: Mutex<HashMap<Id, CancellationToken>>,
    pub workers: Arc<Semaphore>,
    pub notifier: crate::notify::Notifier,
    /// Wakes the update streams of a saved Assembly.
    pub live: crate::live::Live,
    pub upkeep: crate::upkeep::Upkeep,
    /// The instances sharing Assemblies (`--redis-url`), if any.
    pub fleet: Option<Arc<dyn crate::fleet::Fleet>>,
}

impl Service {
    /// Opens the store and resumes what a stop interrupted: an Assembly that was executing runs
    /// again from its first step (with a warning in its status); uploading ones wait on.
    pub async fn open(config: ProcessConfig) -> io::Result<Self> {
        Self::open_in(config, None).await
    }

    /// [`Service::open`] as one instance of `fleet` (several instances on a shared data
    /// directory): executing Assemblies are not resumed here but taken over from the instance
    /// that ran them once it is silent ([`crate::fleet`]).
    pub async fn open_in(
        config: ProcessConfig,
        fleet: Option<Arc<dyn crate::fleet::Fleet>>,
    ) -> io::Result<Self> {
        let store = Store::open(config.dir.clone()).await?;
        let notifier =
            crate::notify::Notifier::new(config.credentials.secret.clone(), config.notify)?;
        let svc = Self(Arc::new(Inner {
            workers: Arc::new(Semaphore::new(config.workers.max(1))),
            upkeep: crate::upkeep::Upkeep::new(
                config.clock.clone(),
                fleet.as_ref().and_then(|f| f.caps()),
            ),
            config,
            store,
            write: tokio::sync::Mutex::new(()),
            running: Mutex::new(HashMap::new()),
            notifier,
            live: crate::live::Live::default(),
            fleet,
        }));
        let all = svc.0.store.all().await?;
        let now = svc.0.upkeep.clock.now();
        for a in &all {
            // Whatever a start finds ended was released when it ended.
            let _ = svc.0.upkeep.index.observe(a, now);
            let bytes = svc.0.store.usage(&a.id).await?;
            svc.0.upkeep.index.measured(&a.id, bytes);
        }
        if let Some(fleet) = &svc.0.fleet {
            crate::fleet::spawn_takeovers(&svc, fleet).await?;
        }
        if let Some(shared) = svc.0.upkeep.shared.clone() {
            crate::upkeep::shared::spawn(Arc::downgrade(&svc.0), shared.clone());
            crate::upkeep::shared::spawn_disk(Arc::downgrade(&svc.0), shared);
        }
        for a in all.into_iter().filter(|_| svc.0.fleet.is_none()) {
            if a.state == State::Executing {
                let id = a.id.clone();
                svc.update(&id, |a| {
                    a.results.clear();
                    a.warnings.push("The server restarted while this Assembly ran; it ran again from its first step.".to_owned());
                })
                .await?;
                tracing::info!(assembly = %id, "resuming an assembly interrupted by a restart");
                svc.start(id);
            }
        }
        let every = crate::upkeep::sweep::interval(&svc.0.config.quotas);
        drop(crate::upkeep::sweep::spawn(Arc::downgrade(&svc.0), every));
        Ok(svc)
    }

    /// The settings.
    pub fn config(&self) -> &ProcessConfig {
        &self.0.config
    }

    /// The update streams' channels and bounds.
    pub fn live(&self) -> &crate::live::Live {
        &self.0.live
    }

    /// Bytes all Assemblies hold on disk, as the disk cap counts them (in a fleet, all its
    /// instances').
    pub fn disk_bytes(&self) -> u64 {
        self.0.upkeep.disk_bytes()
    }

    /// Assembly `id`, if it exists.
    pub async fn load(&self, id: &Id) -> io::Result<Option<Assembly>> {
        self.0.store.load(id).await
    }

    /// Applies `f` to Assembly `id` and saves it; `Ok(None)` if there is none.
    pub async fn update<R>(
        &self,
        id: &Id,
        f: impl FnOnce(&mut Assembly) -> R,
    ) -> io::Result<Option<(Assembly, R)>> {
        let _guard = self.0.write.lock().await;
        let Some(mut a) = self.0.store.load(id).await? else {
            return Ok(None);
        };
        let was_busy = a.state.is_busy();
        let r = f(&mut a);
        self.0.store.save(&a).await?;
        self.0.live.poke(id);
        self.0.upkeep.observe(&a, was_busy && !a.state.is_busy());
        Ok(Some((a, r)))
    }

    /// Saves a new Assembly.
    pub(crate) async fn insert(&self, a: &Assembly) -> io::Result<()> {
        let _guard = self.0.write.lock().await;
        self.0.store.save(a).await?;
        self.0.upkeep.observe(a, false);
        Ok(())
    }

    /// Deletes Assembly `id`, record and files.
    pub(crate) async fn remove(&self, id: &Id) -> io::Result<()> {
        let _guard = self.0.write.lock().await;
        self.0.store.remove(id).await?;
        self.0.upkeep.index.remove(id);
        Ok(())
    }

    /// Adds `file` (already stored under the Assembly's `uploads/`) to Assembly `id`, and starts
    /// it when the last expected upload has arrived. Uploads beyond the expected number, or to
    /// an Assembly no longer uploading, are dropped.
    pub async fn add_upload(&self, id: &Id, file: FileRecord) -> io::Result<bool> {
        let size = file.size;
        let outcome = self
            .update(id, |a| {
                if a.state != State::Uploading || a.uploads_done() {
                    return (false, false);
                }
                a.bytes_received += size;
                a.bytes_expected += size;
                a.uploads.push(file);
                let start = a.uploads_done();
                if start {
                    a.state = State::Executing;
                }
                (true, start)
            })
            .await?;
        let (added, start) = outcome.map(|(_, r)| r).unwrap_or((false, false));
        if start {
            self.start(id.clone());
        }
        Ok(added)
    }

    /// Queues Assembly `id` (already `Executing`) for a worker (in a fleet, if this instance
    /// wins its run).
    pub fn start(&self, id: Id) {
        if let Some(fleet) = self.0.fleet.clone() {
            return crate::fleet::start(self, fleet, id);
        }
        let svc = self.clone();
        tokio::spawn(async move { svc.run_with(&id, CancellationToken::new()).await });
    }

    /// Runs Assembly `id` here to its end, or until `token` (or a cancel here) stops it.
    pub(crate) async fn run_with(&self, id: &Id, token: CancellationToken) {
        if let Ok(mut running) = self.0.running.lock() {
            running.insert(id.clone(), token.clone());
        }
        crate::run::execute(self, id, token).await;
        if let Ok(mut running) = self.0.running.lock() {
            running.remove(id);
        }
    }

    /// Cancels Assembly `id`: a busy one ends `ASSEMBLY_CANCELED` and its running step is
    /// stopped. Returns the record (unchanged if it had already ended).
    pub async fn cancel(&self, id: &Id) -> io::Result<Option<Assembly>> {
        let updated = self
            .update(id, |a| {
                let was_busy = a.state.is_busy();
                if was_busy {
                    a.state = State::Canceled;
                    a.finish_clock();
                }
                was_busy
            })
            .await?;
        let Some((a, was_busy)) = updated else {
            return Ok(None);
        };
        if let Some(token) = self.0.running.lock().ok().and_then(|r| r.get(id).cloned()) {
            token.cancel();
        }
        // The run may be on another instance: it is told wherever it is.
        if let (Some(fleet), true) = (&self.0.fleet, was_busy) {
            if let Err(e) = fleet.cancel(id).await {
                tracing::warn!(assembly = %id, error = %e, "cannot tell the fleet of a cancel");
            }
        }
        if was_busy {
            self.finished(&a);
        }
        Ok(Some(a))
    }

    /// An Assembly reached its end: measure what it holds on disk, send its notification.
    pub(crate) fn finished(&self, a: &Assembly) {
        let svc = self.clone();
        let id = a.id.clone();
        tokio::spawn(async move {
            if let Ok(bytes) = svc.0.store.usage(&id).await {
                svc.0.upkeep.index.measured(&id, bytes);
            }
        });
        if let Some(url) = a.notify_url.clone() {
            let status = crate::assembly::status::status(a, &self.0.config.urls);
            let svc = self.clone();
            let id = a.id.clone();
            tokio::spawn(async move {
                let outcome = svc.0.notifier.send(&url, &status).await;
                let _ = svc.update(&id, |a| a.notify_status = Some(outcome)).await;
            });
        }
    }
}
