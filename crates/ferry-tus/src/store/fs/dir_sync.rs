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
    /// Syncs run so far, for tests and diagnosis.
    runs: u64,
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
                turns.runs += 1;
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

    /// How many syncs have run.
    #[cfg(test)]
    pub(super) fn runs(&self) -> u64 {
        self.lock().runs
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
    use std::sync::mpsc;
    use std::thread;
    use std::time::Duration;

    use super::*;

    /// Waits until `n` callers hold a ticket (they took it under the lock before waiting).
    fn wait_for_tickets(dir: &DirSync, n: u64) {
        while dir.lock().taken < n {
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn callers_that_arrive_during_a_sync_share_the_next_one() {
        let dir = Arc::new(DirSync::default());
        let (started_tx, started) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        // The first sync blocks until released; later ones return at once.
        let first = {
            let dir = dir.clone();
            thread::spawn(move || {
                dir.sync(|| {
                    started_tx.send(()).ok();
                    release_rx.recv().ok();
                    Ok(())
                })
            })
        };
        started.recv().expect("the first sync starts");
        let waiters: Vec<_> = (0..5)
            .map(|_| {
                let dir = dir.clone();
                thread::spawn(move || dir.sync(|| Ok(())))
            })
            .collect();
        wait_for_tickets(&dir, 6);
        assert_eq!(dir.runs(), 1, "the five wait while the first sync runs");
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
        assert_eq!(dir.runs(), 2, "one more sync covers all five waiters");
    }

    #[test]
    fn a_failed_sync_covers_nothing_and_a_waiter_runs_the_next() {
        let dir = Arc::new(DirSync::default());
        let (started_tx, started) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let first = {
            let dir = dir.clone();
            thread::spawn(move || {
                dir.sync(|| {
                    started_tx.send(()).ok();
                    release_rx.recv().ok();
                    Err(io::Error::other("disk gone"))
                })
            })
        };
        started.recv().expect("the first sync starts");
        let waiter = {
            let dir = dir.clone();
            thread::spawn(move || dir.sync(|| Ok(())))
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
        assert_eq!(dir.runs(), 2);
    }

    #[test]
    fn a_sync_started_before_a_call_does_not_cover_it() {
        let dir = DirSync::default();
        dir.sync(|| Ok(())).expect("first");
        dir.sync(|| Ok(())).expect("second");
        assert_eq!(dir.runs(), 2, "calls one after another each sync");
    }
}
