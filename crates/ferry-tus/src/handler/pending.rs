//! Pending final uploads (`concatenation-unfinished`): a final upload created before all its
//! partial uploads finished is concatenated when the last one finishes. PATCH calls
//! [`finish_finals_of`] when a partial upload completes; creation and HEAD call
//! [`finish_if_ready`], which also completes a final whose last part finished before a restart.
//! A final whose parts add up to more than the server's maximum size is never concatenated: its
//! HEAD answers 413.

use super::state::TusState;
use super::write::check_size;
use crate::id::UploadId;
use crate::protocol::TusError;
use crate::store::{Concat, StoreError, UploadInfo};

/// The final's part ids, if `info` is a pending final upload.
fn pending_parts(info: &UploadInfo) -> Option<&[UploadId]> {
    match (&info.concat, info.pending) {
        (Some(Concat::Final(parts)), true) => Some(parts),
        _ => None,
    }
}

/// The parts' infos, or `None` when one of them is gone (terminated or expired): such a final
/// can never be finished.
async fn part_infos(
    state: &TusState,
    parts: &[UploadId],
) -> Result<Option<Vec<UploadInfo>>, TusError> {
    let mut infos = Vec::with_capacity(parts.len());
    for part in parts {
        match state.store().info(part).await {
            Ok(info) => infos.push(info),
            Err(StoreError::NotFound) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(infos))
}

/// The length a pending final will have: the sum of its parts' lengths once all are known.
pub(super) async fn pending_length(
    state: &TusState,
    info: &UploadInfo,
) -> Result<Option<u64>, TusError> {
    let Some(parts) = pending_parts(info) else {
        return Ok(info.length);
    };
    let Some(infos) = part_infos(state, parts).await? else {
        return Ok(None);
    };
    Ok(infos
        .iter()
        .try_fold(0u64, |sum, part| Some(sum.saturating_add(part.length?))))
}

/// Concatenates `info`'s parts into it when it is a pending final whose parts are all finished,
/// and returns the info as it now is. The caller holds the final's lock.
pub(super) async fn finish_if_ready(
    state: &TusState,
    info: UploadInfo,
) -> Result<UploadInfo, TusError> {
    let Some(parts) = pending_parts(&info) else {
        return Ok(info);
    };
    let Some(unfinished) = state.store().as_concatenate_unfinished() else {
        return Ok(info);
    };
    let Some(infos) = part_infos(state, parts).await? else {
        return Ok(info);
    };
    if !infos.iter().all(UploadInfo::is_complete) {
        return Ok(info);
    }
    // Parts of a deferred length may have grown the whole past what creation could check.
    let total = infos
        .iter()
        .map(|part| part.offset)
        .fold(0u64, u64::saturating_add);
    check_size(state, Some(total))?;
    let done = unfinished.finish_pending(&info.id).await?;
    let length = done.length;
    tracing::info!(upload = %info.id, parts = parts.len(), length, "final upload finished");
    Ok(done)
}

/// After the partial upload `part` finished: finishes every pending final that was waiting
/// only for it. Failures are logged, not returned: the part's bytes are stored either way, and
/// the next HEAD of the final tries again.
pub(super) async fn finish_finals_of(state: &TusState, part: &UploadId) {
    let Some(unfinished) = state.store().as_concatenate_unfinished() else {
        return;
    };
    let finals = match unfinished.pending_with(part).await {
        Ok(finals) => finals,
        Err(e) => {
            tracing::error!(upload = %part, error = %e, "pending finals not found");
            return;
        }
    };
    for id in finals {
        let finished = match state.lock().acquire(&id).await {
            Ok(_lease) => match state.store().info(&id).await {
                Ok(info) => finish_if_ready(state, info).await,
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e.into()),
        };
        if let Err(e) = finished {
            tracing::error!(upload = %id, error = %e, "final upload not finished");
        }
    }
}
