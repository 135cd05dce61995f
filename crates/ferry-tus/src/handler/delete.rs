//! DELETE (termination): removes the upload and its bytes.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};

use super::{TusState, parse_id, require_version, tus_resumable};
use crate::protocol::TusError;

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    let id = parse_id(&id)?;
    let Some(terminate) = state.store().as_terminate() else {
        return Err(TusError::NotFound);
    };
    let _guard = state.locks().lock(&id).await;
    terminate.terminate(&id).await?;
    tracing::info!(upload = %id, "upload terminated");
    let mut out = HeaderMap::new();
    let (name, value) = tus_resumable();
    out.insert(name, value);
    Ok((StatusCode::NO_CONTENT, out))
}
