//! Executing an Assembly: wait for a worker (`--assembly-workers`), then run its steps, each
//! once the steps it uses have ended and over their results (independent steps at the same time,
//! up to the number of cores), each bounded by the step time limit and stopped by a cancel. Exported results are saved as each step ends, so pollers see them arrive. The first
//! failing step ends the Assembly with its error.

use std::collections::{HashMap, HashSet};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio_util::sync::CancellationToken;

use crate::assembly::record::{Assembly, FileRecord, State};
use crate::id::Id;
use crate::live::progress::{self, Tracker};
use crate::robots::{self, Ctx, Robot, StepError};
use crate::service::Service;
use crate::steps::{ORIGINAL, Step};

/// Runs Assembly `id` to its end, unless `cancel` fires first.
pub(crate) async fn execute(svc: &Service, id: &Id, cancel: CancellationToken) {
    let permit = tokio::select! {
        () = cancel.cancelled() => return,
        p = svc.0.workers.clone().acquire_owned() => p,
    };
    let Ok(_permit) = permit else { return };
    let started = svc
        .update(id, |a| {
            if a.execution_start.is_none() {
                a.execution_start = Some(jiff::Timestamp::now().to_string());
            }
            a.state == State::Executing
        })
        .await;
    let a = match started {
        Ok(Some((a, true))) => a,
        Ok(_) => return,
        Err(e) => {
            tracing::error!(assembly = %id, error = %e, "cannot read the assembly to run it");
            return;
        }
    };
    let ctx = Ctx {
        assembly: id.clone(),
        dir: svc.0.store.dir(id),
        fields: a.fields.clone(),
        cancel: cancel.clone(),
        egress: svc.config().egress.clone(),
        max_size: svc.config().max_size,
        engines: svc.config().engines.clone(),
        steps: a.steps.clone().into(),
    };
    let a = with_meta(svc, id, a, &ctx).await;
    let tracker = Tracker::new(
        a.steps.len(),
        a.uploads.iter().map(|u| u.id.clone()).collect(),
    );
    let _saver = progress::saver(svc, id, &tracker, svc.live().limits().progress);
    let names: HashSet<&str> = a.steps.iter().map(|s| s.name.as_str()).collect();
    let mut outputs: HashMap<String, Vec<FileRecord>> = HashMap::new();
    outputs.insert(ORIGINAL.to_owned(), a.uploads.clone());
    // Steps start in plan order as soon as the steps they use have ended, up to STEPS_AT_ONCE:
    // independent steps (a thumbnail, a large size and a WebP of the same upload) overlap, so
    // one engine's start-up and I/O hide behind another's work.
    let mut waiting: Vec<&Step> = a.steps.iter().collect();
    let mut running = FuturesUnordered::new();
    loop {
        let mut i = 0;
        while i < waiting.len() && running.len() < steps_at_once() {
            let step = waiting[i];
            let ready = step.robot == Robot::UploadHandle
                || step
                    .uses
                    .iter()
                    .all(|u| outputs.contains_key(u) || !names.contains(u.as_str()));
            if !ready {
                i += 1;
                continue;
            }
            waiting.remove(i);
            let inputs: Vec<FileRecord> = if step.robot == Robot::UploadHandle {
                a.uploads.clone()
            } else {
                step.uses
                    .iter()
                    .flat_map(|u| outputs.get(u).cloned().unwrap_or_default())
                    .collect()
            };
            let limit = svc.config().step_timeout;
            let ctx = &ctx;
            let tracker = &tracker;
            running.push(async move {
                let run = tokio::time::timeout(limit, robots::run(ctx, step, inputs));
                (step, tracker.scope(&step.name, run).await)
            });
        }
        let next = tokio::select! {
            () = cancel.cancelled() => return,
            next = running.next() => next,
        };
        // Nothing running and nothing startable: every step has ended.
        let Some((step, outcome)) = next else { break };
        tracker.ended(&step.name);
        let files = match outcome {
            Ok(Ok(files)) => files,
            // Returning drops the other running steps, which stops their engines.
            Ok(Err(e)) => return fail(svc, id, e, &step.name).await,
            Err(_) => {
                let e = StepError::new(
                    "INTERNAL_COMMAND_TIMEOUT",
                    format!(
                        "Step {:?} took longer than {} s.",
                        step.name,
                        svc.config().step_timeout.as_secs()
                    ),
                );
                return fail(svc, id, e, &step.name).await;
            }
        };
        if step.export {
            let name = step.name.clone();
            let shown = files.clone();
            if let Err(e) = svc
                .update(id, |a| {
                    if a.state == State::Executing {
                        a.results.insert(name, shown);
                    }
                })
                .await
            {
                tracing::error!(assembly = %id, error = %e, "cannot save results");
            }
        }
        outputs.insert(step.name.clone(), files);
    }
    let done = svc
        .update(id, |a| {
            let ran = a.state == State::Executing;
            if ran {
                a.state = State::Completed;
                a.execution_progress = Some(tracker.snapshot());
                a.finish_clock();
            }
            ran
        })
        .await;
    if let Ok(Some((a, true))) = done {
        svc.finished(&a);
    }
}

/// Uploads get their `meta` (width, height, duration, codecs, EXIF) from ffprobe when it is
/// here; a file it cannot read keeps an empty `meta`.
async fn with_meta(svc: &Service, id: &Id, a: Assembly, ctx: &Ctx) -> Assembly {
    let programs = &ctx.engines.programs;
    let probe = programs.ffprobe.is_some() && a.uploads.iter().any(|u| u.meta.is_empty());
    let mut metas = Vec::with_capacity(a.uploads.len());
    for u in a.uploads.iter().filter(|_| probe) {
        let path = ctx.dir.join(&u.path);
        let probed =
            crate::engines::probe::probe(programs, &path, &ctx.engines.limits, &ctx.cancel).await;
        metas.push(probed.ok().and_then(|p| serde_json::to_value(p.meta).ok()));
    }
    let updated = svc
        .update(id, |rec| {
            // Said once on the update stream (`assembly_upload_meta_data_extracted`).
            rec.upload_meta_data_extracted = true;
            for (u, meta) in rec.uploads.iter_mut().zip(&metas) {
                if let Some(serde_json::Value::Object(m)) = meta {
                    u.meta = m.clone();
                }
            }
        })
        .await;
    match updated {
        Ok(Some((rec, ()))) => rec,
        _ => a,
    }
}

async fn fail(svc: &Service, id: &Id, e: StepError, step: &str) {
    tracing::info!(assembly = %id, step, code = e.code, message = %e.message, "assembly failed");
    let done = svc
        .update(id, |a| {
            let ran = a.state == State::Executing;
            if ran {
                a.fail(e.code, e.message, Some(step.to_owned()));
            }
            ran
        })
        .await;
    if let Ok(Some((a, true))) = done {
        svc.finished(&a);
    }
}

/// How many steps of one Assembly run at once: the machine's cores, at least 2 (engines spend
/// part of each job starting up and writing, which another step's work can fill).
fn steps_at_once() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2)
            .clamp(2, 8)
    })
}
