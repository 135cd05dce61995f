//! DELETE (termination): ends any request in flight for the upload, then removes it and its
//! bytes.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};

use super::{TusState, parse_id, require_version, tus_headers};
use crate::protocol::TusError;

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    terminate(&state, &id).await?;
    Ok((StatusCode::NO_CONTENT, tus_headers()))
}

/// Removes the upload named by the path segment `raw` (shared with the IETF draft's DELETE).
pub(super) async fn terminate(state: &TusState, raw: &str) -> Result<(), TusError> {
    let id = parse_id(raw)?;
    let Some(terminate) = state.store().as_terminate() else {
        return Err(TusError::UnsupportedExtension);
    };
    let _guard = state.locks().lock(&id).await;
    terminate.terminate(&id).await?;
    tracing::info!(upload = %id, "upload terminated");
    Ok(())
}
