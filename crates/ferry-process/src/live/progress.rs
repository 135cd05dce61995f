//! Execution progress of a running Assembly, as Transloadit reports it: `progress_combined`
//! (0..100 for the whole Assembly) and `progress_per_original_file` (`[{original_id, progress}]`).
//!
//! Every step weighs the same. An ended step counts whole; a running one by the share of its jobs
//! done, the running job counted by the fraction its engine reports (ffmpeg's `-progress` lines
//! over the input's duration). Per original file, a running step counts by that file's own job.
//! Robots report through a task-local [`Reporter`], so no robot needs a new parameter: run.rs
//! wraps each step's future in [`Tracker::scope`], and a robot outside one reports into nothing.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::id::Id;

/// What the status shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// 0..100, one decimal.
    pub combined: f64,
    /// Per upload, 0..100, in upload order.
    pub per_original: Vec<(Id, f64)>,
}

#[derive(Debug, Default)]
struct Running {
    /// The job running now and how many the step has.
    job: (usize, usize),
    /// (jobs done + the running job's fraction) / jobs, 0..1.
    share: f64,
    /// Per original file, 0..1.
    per_original: HashMap<Id, f64>,
}

#[derive(Debug, Default)]
struct State {
    steps: usize,
    originals: Vec<Id>,
    ended: HashSet<String>,
    running: HashMap<String, Running>,
}

/// The progress of one Assembly's execution; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Tracker(Arc<Mutex<State>>);

impl Tracker {
    /// A tracker for `steps` steps over the uploads `originals`.
    pub fn new(steps: usize, originals: Vec<Id>) -> Self {
        Self(Arc::new(Mutex::new(State {
            steps,
            originals,
            ..Default::default()
        })))
    }

    /// Runs `fut` (one step) with its robot's reports going to step `step`.
    pub async fn scope<F: Future>(&self, step: &str, fut: F) -> F::Output {
        let reporter = Reporter {
            tracker: self.clone(),
            step: step.to_owned(),
        };
        REPORTER.scope(reporter, fut).await
    }

    /// Step `step` has ended.
    pub fn ended(&self, step: &str) {
        if let Ok(mut s) = self.0.lock() {
            s.running.remove(step);
            s.ended.insert(step.to_owned());
        }
    }

    /// The figures now.
    pub fn snapshot(&self) -> Snapshot {
        let Ok(s) = self.0.lock() else {
            return Snapshot::default();
        };
        let steps = s.steps.max(1) as f64;
        let ended = s.ended.len() as f64;
        let running: f64 = s.running.values().map(|r| r.share).sum();
        let pct = |x: f64| ((x / steps).clamp(0.0, 1.0) * 1000.0).round() / 10.0;
        let per_original = s
            .originals
            .iter()
            .map(|o| {
                let mine: f64 = s
                    .running
                    .values()
                    .map(|r| r.per_original.get(o).copied().unwrap_or(0.0))
                    .sum();
                (o.clone(), pct(ended + mine))
            })
            .collect();
        Snapshot {
            combined: pct(ended + running),
            per_original,
        }
    }

    fn fraction(&self, step: &str, original: &Id, fraction: f64) {
        let job = self
            .0
            .lock()
            .ok()
            .and_then(|s| s.running.get(step).map(|r| r.job));
        if let Some((index, jobs)) = job {
            self.job(step, index, jobs, original, fraction);
        }
    }

    fn job(&self, step: &str, index: usize, jobs: usize, original: &Id, fraction: f64) {
        let fraction = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if let Ok(mut s) = self.0.lock() {
            if s.ended.contains(step) {
                return;
            }
            let r = s.running.entry(step.to_owned()).or_default();
            r.job = (index, jobs);
            r.share = ((index as f64 + fraction) / jobs.max(1) as f64).clamp(0.0, 1.0);
            let mine = r.per_original.entry(original.clone()).or_default();
            // An original may have several jobs in one step (its thumbnails, say): never go back.
            *mine = mine.max(fraction);
        }
    }
}

/// Where a robot's reports go: the step it runs for.
#[derive(Clone, Debug)]
struct Reporter {
    tracker: Tracker,
    step: String,
}

tokio::task_local! {
    static REPORTER: Reporter;
}

/// Job `index` of `jobs` in the current step, made from `original`, is `fraction` (0..1) done.
/// Outside a tracked step (tests calling a robot directly) this does nothing.
pub fn report(index: usize, jobs: usize, original: &Id, fraction: f64) {
    let _ = REPORTER.try_with(|r| r.tracker.job(&r.step, index, jobs, original, fraction));
}

/// The running job of the current step (the last [`report`]ed) is `fraction` done: what an
/// engine's progress callback says.
pub fn report_fraction(original: &Id, fraction: f64) {
    let _ = REPORTER.try_with(|r| r.tracker.fraction(&r.step, original, fraction));
}

/// Saves `tracker`'s figures into Assembly `id` every `every` while it executes, when they
/// changed; stops when dropped.
pub(crate) fn saver(
    svc: &crate::service::Service,
    id: &Id,
    tracker: &Tracker,
    every: std::time::Duration,
) -> Saver {
    let (svc, id, tracker) = (svc.clone(), id.clone(), tracker.clone());
    let task = tokio::spawn(async move {
        let mut last = Snapshot::default();
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = tracker.snapshot();
            if now == last {
                continue;
            }
            let saved = now.clone();
            let r = svc
                .update(&id, |a| {
                    let busy = a.state == crate::assembly::record::State::Executing;
                    if busy {
                        a.execution_progress = Some(saved);
                    }
                    busy
                })
                .await;
            match r {
                Ok(Some((_, true))) => last = now,
                _ => return,
            }
        }
    });
    Saver(task)
}

/// The task of [`saver`]; aborted when dropped.
#[derive(Debug)]
pub(crate) struct Saver(tokio::task::JoinHandle<()>);

impl Drop for Saver {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn steps_weigh_the_same_and_jobs_split_their_step() {
        let (a, b) = (Id::random(), Id::random());
        let t = Tracker::new(2, vec![a.clone(), b.clone()]);
        assert_eq!(t.snapshot().combined, 0.0);
        // Step "enc" has two jobs: a's is half done.
        t.scope("enc", async { report(0, 2, &a, 0.5) }).await;
        let s = t.snapshot();
        assert_eq!(s.combined, 12.5);
        assert_eq!(s.per_original, vec![(a.clone(), 25.0), (b.clone(), 0.0)]);
        // a's job done, b's a quarter.
        t.scope("enc", async {
            report(0, 2, &a, 1.0);
            report(1, 2, &b, 0.25);
        })
        .await;
        assert_eq!(t.snapshot().combined, 31.3);
        t.ended("enc");
        let s = t.snapshot();
        assert_eq!(s.combined, 50.0);
        assert_eq!(s.per_original, vec![(a.clone(), 50.0), (b.clone(), 50.0)]);
        // A late report of an ended step changes nothing; outside a scope nothing is reported.
        t.scope("enc", async { report(0, 2, &a, 0.1) }).await;
        report(0, 1, &a, 0.9);
        assert_eq!(t.snapshot().combined, 50.0);
        t.ended("other");
        assert_eq!(t.snapshot().combined, 100.0);
        // An engine's fraction goes to the job the robot last announced.
        let t = Tracker::new(1, vec![a.clone(), b.clone()]);
        t.scope("y", async {
            report(1, 2, &b, 0.0);
            report_fraction(&b, 0.5);
        })
        .await;
        assert_eq!(t.snapshot().combined, 75.0);
        assert_eq!(t.snapshot().per_original[1], (b.clone(), 50.0));
        // Nonsense from an engine is clamped.
        let t = Tracker::new(1, vec![a.clone()]);
        t.scope("x", async { report(0, 1, &a, f64::NAN) }).await;
        t.scope("x", async { report(0, 1, &a, 7.0) }).await;
        assert_eq!(t.snapshot().combined, 100.0);
    }
}
