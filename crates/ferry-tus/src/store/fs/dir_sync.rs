//! Group commit of the store directory's fsync.
//!
//! Every creation (and every info rewrite, which renames) must sync the directory before it is
//! acknowledged, so that its new entries survive power loss. One `fsync` of a directory makes
//! durable every entry change made before it started, whoever made it. So when several uploads
//! are created at once (a browser sends six small files at a time), the callers that arrive
//! while one sync runs wait for it to end and then share a single next sync, instead of each
//! running its own: with `k` callers at once the directory is synced about twice, not `k` times.
//!
//! A caller takes a ticket after its change; a sync covers every ticket taken before it started.
//! A failed sync covers nothing: its caller gets the error, and a waiter runs the next sync.

use std::io;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Shares directory syncs between concurrent callers (see the module docs).
#[derive(Debug, Default)]
pub(super) struct DirSync {
    turns: Mutex<Turns>,
    ended: Condvar,
}

#[derive(Debug, Default)]
struct Turns {
    /// Tickets handed out so far (the last one's number).
    taken: u64,
    /// Every ticket up to this one is covered by a sync that succeeded.
    covered: u64,
    /// A sync is running now.
    syncing: bool,
}

impl DirSync {
    /// Returns once a sync that started after this call has succeeded: every change the caller
    /// made to the directory before calling is then durable. `sync` runs the fsync itself; it
    /// runs on this thread if no sync is running, and otherwise a later one may cover this call.
    pub(super) fn sync(&self, sync: impl Fn() -> io::Result<()>) -> io::Result<()> {
        let mut turns = self.lock();
        turns.taken += 1;
        let ticket = turns.taken;
        loop {
            if turns.covered >= ticket {
                return Ok(());
            }
            if !turns.syncing {
                turns.syncing = true;
                let upto = turns.taken;
                drop(turns);
                let result = sync();
                turns = self.lock();
                turns.syncing = false;
                if result.is_ok() {
                    turns.covered = turns.covered.max(upto);
                }
                self.ended.notify_all();
                return result;
            }
            turns = self
                .ended
                .wait(turns)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Turns> {
        // The guarded counters are updated in single statements with nothing that panics
        // between them, so a poisoned lock still holds consistent values.
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;
    use std::thread::{self, JoinHandle};
    use std::time::Duration;

    use super::*;

    /// Counts the syncs the tests' closures run.
    type Runs = Arc<AtomicU64>;

    fn count(runs: &Runs) -> u64 {
        runs.load(Ordering::SeqCst)
    }

    /// A sync that only counts itself.
    fn quick(runs: &Runs) -> impl Fn() -> io::Result<()> + use<> {
        let runs = runs.clone();
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    /// Starts a sync on another thread that blocks until the returned sender is used, then ends
    /// with `outcome`; returns once it runs.
    fn blocked(
        dir: &Arc<DirSync>,
        runs: &Runs,
        outcome: fn() -> io::Result<()>,
    ) -> (JoinHandle<io::Result<()>>, mpsc::Sender<()>) {
        let (started_tx, started) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let (dir, runs) = (dir.clone(), runs.clone());
        let first = thread::spawn(move || {
            dir.sync(|| {
                runs.fetch_add(1, Ordering::SeqCst);
                started_tx.send(()).ok();
                release_rx.recv().ok();
                outcome()
            })
        });
        started.recv().expect("the first sync starts");
        (first, release)
    }

    /// Waits until `n` callers hold a ticket (they took it under the lock before waiting).
    fn wait_for_tickets(dir: &DirSync, n: u64) {
        while dir.lock().taken < n {
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn callers_that_arrive_during_a_sync_share_the_next_one() {
        let (dir, runs) = (Arc::new(DirSync::default()), Runs::default());
        let (first, release) = blocked(&dir, &runs, || Ok(()));
        let waiters: Vec<_> = (0..5)
            .map(|_| {
                let (dir, sync) = (dir.clone(), quick(&runs));
                thread::spawn(move || dir.sync(sync))
            })
            .collect();
        wait_for_tickets(&dir, 6);
        assert_eq!(count(&runs), 1, "the five wait while the first sync runs");
        release.send(()).expect("the first sync waits");
        first
            .join()
            .expect("no panic")
            .expect("the first sync succeeds");
        for w in waiters {
            w.join()
                .expect("no panic")
                .expect("covered by the shared sync");
        }
        assert_eq!(count(&runs), 2, "one more sync covers all five waiters");
    }

    #[test]
    fn a_failed_sync_covers_nothing_and_a_waiter_runs_the_next() {
        let (dir, runs) = (Arc::new(DirSync::default()), Runs::default());
        let (first, release) = blocked(&dir, &runs, || Err(io::Error::other("disk gone")));
        let waiter = {
            let (dir, sync) = (dir.clone(), quick(&runs));
            thread::spawn(move || dir.sync(sync))
        };
        wait_for_tickets(&dir, 2);
        release.send(()).expect("the first sync waits");
        let failed = first.join().expect("no panic");
        assert_eq!(
            failed.map_err(|e| e.to_string()),
            Err("disk gone".to_owned())
        );
        waiter
            .join()
            .expect("no panic")
            .expect("the waiter's own sync succeeds");
        assert_eq!(count(&runs), 2);
    }

    #[test]
    fn a_sync_started_before_a_call_does_not_cover_it() {
        let (dir, runs) = (DirSync::default(), Runs::default());
        dir.sync(quick(&runs)).expect("first");
        dir.sync(quick(&runs)).expect("second");
        assert_eq!(count(&runs), 2, "calls one after another each sync");
    }
}
