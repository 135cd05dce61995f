//! The syncs a request waits on: run together, and seen by a probe.
//!
//! A request that must make several things durable before it answers (a creation with its
//! first bytes: the info file, the data file and the directory's entries) starts all their syncs
//! at once and waits for the last, instead of one after another. Each sync ends in a flush of
//! the disk's cache (on a journaled file system, a journal commit); issued together they share
//! that work (the block layer merges flushes waiting behind one in progress; concurrent commits
//! join one transaction), so the request waits about one flush, not three. The durability is
//! the same: every sync has ended before the answer.
//!
//! [`SyncProbe`] is told of each sync's start and end, so tests can check that each one is made
//! before the answer, and that they overlap.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a sync makes durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Synced {
    /// An upload's info file.
    Info,
    /// An upload's bytes.
    Data,
    /// The store directory's entries (creations and renames).
    Dir,
}

/// Told of every sync a request of the fs store waits on ([`super::FsStore::with_sync_probe`]):
/// for tests and diagnosis. Both calls run on the thread making the sync, so one that blocks
/// holds that sync back.
pub trait SyncProbe: Send + Sync + fmt::Debug {
    /// `what` at `path` is about to be synced.
    fn started(&self, what: Synced, path: &Path);
    /// The sync of `what` at `path` ended, well or not.
    fn ended(&self, what: Synced, path: &Path, outcome: &io::Result<()>);
}

/// A store's probe, if it has one.
#[derive(Clone, Debug, Default)]
pub(super) struct Probe(pub(super) Option<Arc<dyn SyncProbe>>);

/// A sync to run on the blocking pool.
pub(super) struct Job {
    what: Synced,
    path: PathBuf,
    run: Box<dyn FnOnce() -> io::Result<()> + Send>,
}

impl Job {
    /// A sync of `what` at `path`, made by `run`.
    pub(super) fn new(
        what: Synced,
        path: PathBuf,
        run: impl FnOnce() -> io::Result<()> + Send + 'static,
    ) -> Self {
        Self {
            what,
            path,
            run: Box::new(run),
        }
    }
}

impl Probe {
    /// Runs `job` here, telling the probe.
    pub(super) fn run(&self, job: Job) -> io::Result<()> {
        if let Some(probe) = &self.0 {
            probe.started(job.what, &job.path);
        }
        let outcome = (job.run)();
        if let Some(probe) = &self.0 {
            probe.ended(job.what, &job.path, &outcome);
        }
        outcome
    }
}

/// Runs every job at once on the blocking pool and waits for all of them to end; returns the
/// first failure. A job is never dropped half-run: one already started ends even if the caller
/// stops waiting.
pub(super) async fn together(probe: &Probe, jobs: Vec<Job>) -> io::Result<()> {
    let running: Vec<_> = jobs
        .into_iter()
        .map(|job| {
            let probe = probe.clone();
            tokio::task::spawn_blocking(move || probe.run(job))
        })
        .collect();
    let mut outcome = Ok(());
    for sync in running {
        let ended = sync.await.map_err(io::Error::other).and_then(|r| r);
        if outcome.is_ok() {
            outcome = ended;
        }
    }
    outcome
}
