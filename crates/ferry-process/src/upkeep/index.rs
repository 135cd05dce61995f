//! What the upkeep knows of every Assembly, in memory, so caps and the sweeper never read the
//! records on disk: who created it, whether it is still busy, when it last made progress or
//! ended, and how many bytes it holds. Every saved record passes through [`Index::observe`]
//! (from [`crate::service::Service::update`]); times come from the upkeep's clock, so a test
//! can move them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;

use super::shared::Held;
use crate::assembly::record::{Assembly, State};
use crate::id::Id;

/// One Assembly as the upkeep sees it.
#[derive(Clone, Debug)]
struct Entry {
    client: Option<String>,
    state: State,
    expired: bool,
    uploads: usize,
    /// Bytes of tus uploads into it so far (they arrive before they are uploads).
    tus_bytes: u64,
    /// The last time an upload arrived or a tus upload into it moved (or it was created, or the server started).
    progress: Timestamp,
    /// When it stopped being busy.
    ended: Option<Timestamp>,
    /// When its files were deleted (it is a tombstone since).
    expired_at: Option<Timestamp>,
    /// Bytes its record names (uploads and exported results).
    named: u64,
    /// Bytes found in its directory when last measured (intermediate results too).
    measured: u64,
}

impl Entry {
    fn bytes(&self) -> u64 {
        self.named.max(self.measured)
    }
}

/// What the sweeper should do with an Assembly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Due {
    /// Uploading without progress past the upload timeout: it fails with `ASSEMBLY_EXPIRED`.
    Abandoned(Id),
    /// Ended longer ago than the retention: its files go, a tombstone answers for it.
    Retired(Id),
    /// A tombstone older than the retention: the record goes too.
    Forgotten(Id),
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Id, Entry>,
    /// Assemblies whose creating form is still arriving (never expired meanwhile), with how
    /// many requests are at it (a second POST of a taken id is refused, but it comes first).
    receiving: HashMap<Id, usize>,
    /// Bytes of forms being received, not yet in any record.
    pending: u64,
    /// The sum of every entry's bytes, kept as entries change (read on every form chunk).
    held: u64,
    /// Assemblies whose bytes changed since the fleet's tally last took them
    /// ([`Index::take_changed`]); kept only once [`Index::report_changes`] asked for them.
    changed: HashSet<Id>,
    reporting: bool,
}

impl Inner {
    /// Applies `f` to entry `id` and keeps `held` in step with its bytes.
    fn change(&mut self, id: &Id, f: impl FnOnce(&mut Entry)) {
        if let Some(e) = self.entries.get_mut(id) {
            let before = e.bytes();
            f(e);
            self.held = self.held.saturating_sub(before) + e.bytes();
            if self.reporting && e.bytes() != before {
                self.changed.insert(id.clone());
            }
        }
    }
}

/// The index; cheap to share.
#[derive(Debug, Default)]
pub struct Index(Mutex<Inner>, tokio::sync::Notify);

impl Index {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Plain maps and counters: a panicking holder cannot leave them half-changed.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `a` as just saved at `now`. An Assembly seen for the first time after a start
    /// keeps the end time its record holds; a busy one gets a fresh upload timeout. Returns
    /// the Assembly and its client when this save is the one that ended it.
    pub fn observe(&self, a: &Assembly, now: Timestamp) -> Option<Held> {
        // A result may be its input passed on (/file/filter): each stored file counts once.
        let mut paths = std::collections::HashSet::new();
        let named = a
            .uploads
            .iter()
            .chain(a.results.values().flatten())
            .filter(|f| paths.insert(f.path.as_str()))
            .map(|f| f.size)
            .sum();
        let mut inner = self.lock();
        inner.entries.entry(a.id.clone()).or_insert_with(|| Entry {
            client: a.client.clone(),
            state: a.state,
            expired: false,
            uploads: a.uploads.len(),
            tus_bytes: 0,
            progress: now,
            ended: (!a.state.is_busy()).then(|| stamp(a.finished.as_deref()).unwrap_or(now)),
            expired_at: a.expired.as_deref().map(|t| stamp(Some(t)).unwrap_or(now)),
            named: 0,
            measured: 0,
        });
        let tus_bytes = a.tus_uploads.iter().map(|t| t.offset).sum();
        let mut ended = None;
        inner.change(&a.id, |entry| {
            if entry.uploads != a.uploads.len() || entry.tus_bytes != tus_bytes {
                entry.progress = now;
            }
            entry.tus_bytes = tus_bytes;
            if entry.state.is_busy() && !a.state.is_busy() {
                entry.ended = Some(now);
                ended = a.client.clone().map(|client| Held {
                    client,
                    id: a.id.clone(),
                });
            }
            if !entry.expired && a.expired.is_some() {
                entry.expired_at = Some(now);
            }
            entry.expired = a.expired.is_some();
            entry.state = a.state;
            entry.uploads = a.uploads.len();
            entry.client.clone_from(&a.client);
            entry.named = named;
            if a.expired.is_some() {
                // A tombstone's files were deleted by whichever instance retired it.
                entry.measured = 0;
            }
        });
        let wake = !inner.changed.is_empty();
        drop(inner);
        if wake {
            self.1.notify_one();
        }
        ended
    }

    /// Sets the bytes found in Assembly `id`'s directory.
    pub fn measured(&self, id: &Id, bytes: u64) {
        self.lock().change(id, |e| e.measured = bytes);
        self.1.notify_one();
    }

    /// Forgets Assembly `id` (its directory is gone).
    pub fn remove(&self, id: &Id) {
        let mut inner = self.lock();
        if let Some(e) = inner.entries.remove(id) {
            inner.held = inner.held.saturating_sub(e.bytes());
            if inner.reporting {
                inner.changed.insert(id.clone());
            }
        }
        drop(inner);
        self.1.notify_one();
    }

    /// From now on, keeps which Assemblies' bytes change (for a fleet's tally), starting with
    /// every one known.
    pub fn report_changes(&self) {
        let mut inner = self.lock();
        inner.reporting = true;
        let all: Vec<Id> = inner.entries.keys().cloned().collect();
        inner.changed.extend(all);
    }

    /// The Assemblies whose bytes changed since the last call, with their bytes now (0 for
    /// one that is gone).
    pub fn take_changed(&self) -> Vec<(Id, u64)> {
        let mut inner = self.lock();
        let changed = std::mem::take(&mut inner.changed);
        changed
            .into_iter()
            .map(|id| {
                let bytes = inner.entries.get(&id).map_or(0, Entry::bytes);
                (id, bytes)
            })
            .collect()
    }

    /// Marks `ids` changed again (their last report failed).
    pub fn mark_changed(&self, ids: impl IntoIterator<Item = Id>) {
        self.lock().changed.extend(ids);
    }

    /// Waits until some Assembly's bytes change.
    pub async fn changes(&self) {
        self.1.notified().await;
    }

    /// Bytes of forms being received here, not yet in any record.
    pub fn pending(&self) -> u64 {
        self.lock().pending
    }

    /// How many uploads this instance last saw Assembly `id` hold (in a fleet, another instance
    /// may have added some since: then it made progress).
    pub fn uploads_seen(&self, id: &Id) -> Option<usize> {
        self.lock().entries.get(id).map(|e| e.uploads)
    }

    /// Bytes held by every Assembly, and by forms still arriving.
    pub fn bytes(&self) -> u64 {
        let inner = self.lock();
        inner.held + inner.pending
    }

    /// Assemblies of `client` still uploading or executing.
    pub fn active(&self, client: &str) -> usize {
        self.lock()
            .entries
            .values()
            .filter(|e| e.state.is_busy() && e.client.as_deref() == Some(client))
            .count()
    }

    /// Every Assembly with a client that this instance last saw uploading or executing.
    pub fn busy(&self) -> Vec<Held> {
        self.lock()
            .entries
            .iter()
            .filter(|(_, e)| e.state.is_busy())
            .filter_map(|(id, e)| {
                e.client.clone().map(|client| Held {
                    client,
                    id: id.clone(),
                })
            })
            .collect()
    }

    /// Up to `limit` Assemblies due for the sweeper at `now`, the most overdue first.
    pub fn due(
        &self,
        now: Timestamp,
        upload_timeout: jiff::SignedDuration,
        retention: jiff::SignedDuration,
        limit: usize,
    ) -> Vec<Due> {
        let inner = self.lock();
        let mut due: Vec<(Timestamp, Due)> = inner
            .entries
            .iter()
            .filter_map(|(id, e)| {
                let since = |t: Timestamp, d| t.checked_add(d).ok().filter(|end| *end <= now);
                if let Some(at) = e.expired_at {
                    return since(at, retention).map(|t| (t, Due::Forgotten(id.clone())));
                }
                if e.state == State::Uploading && !inner.receiving.contains_key(id) {
                    return since(e.progress, upload_timeout)
                        .map(|t| (t, Due::Abandoned(id.clone())));
                }
                let ended = e.ended.filter(|_| !e.state.is_busy())?;
                since(ended, retention).map(|t| (t, Due::Retired(id.clone())))
            })
            .collect();
        due.sort_by_key(|(t, _)| *t);
        due.into_iter().take(limit).map(|(_, d)| d).collect()
    }

    /// Marks Assembly `id`'s form as arriving until the guard is dropped.
    pub fn receiving(self: &Arc<Self>, id: &Id) -> Receiving {
        *self.lock().receiving.entry(id.clone()).or_default() += 1;
        Receiving {
            index: self.clone(),
            id: id.clone(),
            bytes: 0,
        }
    }
}

/// A form being received: its Assembly is not expired meanwhile, and its bytes count against
/// the disk cap before its record names them.
#[derive(Debug)]
pub struct Receiving {
    index: Arc<Index>,
    id: Id,
    bytes: u64,
}

impl Receiving {
    /// Counts `n` more bytes of this form if the total stays within `max`; `false` otherwise.
    /// `held` is what Assemblies hold, if known better than this index knows it (a fleet's
    /// total).
    pub fn grow(&mut self, n: u64, max: Option<u64>, held: Option<u64>) -> bool {
        let mut inner = self.index.lock();
        let total = held.unwrap_or(inner.held) + inner.pending;
        if max.is_some_and(|m| total.saturating_add(n) > m) {
            return false;
        }
        inner.pending += n;
        self.bytes += n;
        true
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        let mut inner = self.index.lock();
        if let Some(n) = inner.receiving.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                inner.receiving.remove(&self.id);
            }
        }
        inner.pending = inner.pending.saturating_sub(self.bytes);
    }
}

fn stamp(raw: Option<&str>) -> Option<Timestamp> {
    raw?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::record::FileRecord;

    fn assembly(client: &str) -> Assembly {
        let mut a = Assembly::new(
            Id::random(),
            serde_json::json!({}),
            Vec::new(),
            serde_json::Map::new(),
            1,
        );
        a.client = Some(client.to_owned());
        a
    }

    #[test]
    fn the_save_that_ends_an_assembly_names_it_once() {
        let index = Index::default();
        let now = Timestamp::now();
        let mut a = assembly("k@1.2.3.4");
        assert_eq!(index.observe(&a, now), None, "created, in progress");
        assert_eq!(index.busy().len(), 1);
        a.state = State::Canceled;
        let held = Held {
            client: "k@1.2.3.4".to_owned(),
            id: a.id.clone(),
        };
        assert_eq!(index.observe(&a, now), Some(held));
        assert_eq!(index.observe(&a, now), None, "saved again, already ended");
        assert!(index.busy().is_empty());
    }

    #[test]
    fn size_changes_are_kept_only_once_asked_for() {
        let index = Index::default();
        let now = Timestamp::now();
        let mut a = assembly("k@1.2.3.4");
        a.uploads.push(FileRecord::upload(
            Id::random(),
            "a.bin".into(),
            40,
            "application/octet-stream".into(),
            "file".into(),
        ));
        index.observe(&a, now);
        assert!(index.take_changed().is_empty(), "not reporting yet");
        index.report_changes();
        assert_eq!(index.take_changed(), vec![(a.id.clone(), 40)], "all known");
        index.observe(&a, now);
        assert!(index.take_changed().is_empty(), "same size");
        index.measured(&a.id, 100);
        assert_eq!(index.take_changed(), vec![(a.id.clone(), 100)]);
        index.remove(&a.id);
        assert_eq!(index.take_changed(), vec![(a.id.clone(), 0)], "gone");
    }
}
