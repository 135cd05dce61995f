//! The sweeper: in bounded passes, an Assembly uploading with no upload arriving for
//! `--assembly-upload-timeout` fails with `ASSEMBLY_EXPIRED` (its uploads deleted, its
//! notification sent); one ended longer than `--assembly-retention` ago loses its files and
//! becomes a tombstone whose status answers `ASSEMBLY_EXPIRED` (410); a tombstone older than the
//! retention is removed (then `ASSEMBLY_NOT_FOUND`). Executing Assemblies are never expired:
//! the step time limit bounds them.

use std::io;
use std::sync::Weak;
use std::time::Duration;

use axum::http::StatusCode;
use jiff::SignedDuration;

use super::index::Due;
use crate::assembly::record::{Assembly, State};
use crate::error::ApiError;
use crate::id::Id;
use crate::service::{Inner, Service};

/// Most Assemblies one pass handles; a full pass is followed by another soon after.
pub const MAX_PER_PASS: usize = 100;

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Uploading Assemblies expired for lack of uploads.
    pub abandoned: usize,
    /// Ended Assemblies whose files were deleted.
    pub retired: usize,
    /// Tombstones removed.
    pub forgotten: usize,
}

impl Swept {
    fn total(self) -> usize {
        self.abandoned + self.retired + self.forgotten
    }
}

/// The answer for an Assembly whose files were deleted after the retention.
pub fn expired() -> ApiError {
    ApiError::new(
        StatusCode::GONE,
        "ASSEMBLY_EXPIRED",
        "This Assembly ended longer ago than the server keeps Assemblies; its status and files were deleted.",
    )
}

/// `a`, unless it is a tombstone (then [`expired`]).
pub fn live(a: Assembly) -> Result<Assembly, ApiError> {
    if a.expired.is_some() {
        return Err(expired());
    }
    Ok(a)
}

fn span(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

impl Service {
    /// One pass of the sweeper over at most [`MAX_PER_PASS`] due Assemblies.
    pub async fn sweep(&self) -> io::Result<Swept> {
        let _one = self.0.upkeep.sweeping.lock().await;
        let q = &self.config().quotas;
        let now = self.0.upkeep.clock.now();
        let due =
            self.0
                .upkeep
                .index
                .due(now, span(q.upload_timeout), span(q.retention), MAX_PER_PASS);
        let mut swept = Swept::default();
        for d in due {
            match d {
                Due::Abandoned(id) => swept.abandoned += usize::from(self.abandon(&id).await?),
                Due::Retired(id) => swept.retired += usize::from(self.retire(&id).await?),
                Due::Forgotten(id) => {
                    self.remove(&id).await?;
                    swept.forgotten += 1;
                }
            }
        }
        if swept.total() > 0 {
            tracing::info!(
                abandoned = swept.abandoned,
                retired = swept.retired,
                forgotten = swept.forgotten,
                "assemblies expired"
            );
        }
        Ok(swept)
    }

    async fn abandon(&self, id: &Id) -> io::Result<bool> {
        let secs = self.config().quotas.upload_timeout.as_secs();
        let seen = self.0.upkeep.index.uploads_seen(id);
        let ended = self
            .update(id, |a| {
                // More uploads than this instance saw: another one took them (a fleet), and
                // this save restarts the timeout.
                let idle = a.state == State::Uploading && Some(a.uploads.len()) == seen;
                if idle {
                    a.fail(
                        "ASSEMBLY_EXPIRED",
                        format!("No upload reached this Assembly for {secs} s; it expired and its uploads were deleted."),
                        None,
                    );
                    a.uploads.clear();
                }
                idle
            })
            .await?;
        let Some((a, true)) = ended else {
            return Ok(false);
        };
        self.0.store.clear_files(id).await?;
        self.0.upkeep.index.measured(id, 0);
        self.finished(&a);
        Ok(true)
    }

    async fn retire(&self, id: &Id) -> io::Result<bool> {
        let now = self.0.upkeep.clock.now().to_string();
        let retired = self
            .update(id, |a| {
                let due = !a.state.is_busy() && a.expired.is_none();
                if due {
                    a.expired = Some(now);
                    a.uploads.clear();
                    a.results.clear();
                }
                due
            })
            .await?;
        if !matches!(retired, Some((_, true))) {
            return Ok(false);
        }
        self.0.store.clear_files(id).await?;
        self.0.upkeep.index.measured(id, 0);
        Ok(true)
    }
}

/// Runs passes every `every` while the service lives (it holds no strong reference).
pub(crate) fn spawn(service: Weak<Inner>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut wait = every;
        loop {
            tokio::time::sleep(wait).await;
            let Some(inner) = service.upgrade() else {
                return;
            };
            let svc = Service(inner);
            wait = match svc.sweep().await {
                Ok(s) if s.total() >= MAX_PER_PASS => Duration::from_secs(1).min(every),
                Ok(_) => every,
                Err(e) => {
                    tracing::warn!(error = %e, "assembly sweep failed; retrying next pass");
                    every
                }
            };
        }
    })
}

/// How often the sweeper looks: a quarter of the shorter period, from 1 s to 1 min.
pub fn interval(q: &super::caps::Quotas) -> Duration {
    (q.retention.min(q.upload_timeout) / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
}
