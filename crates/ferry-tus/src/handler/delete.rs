//! DELETE (termination): ends any request in flight for the upload, then removes it and its
//! bytes ([`super::write::terminate`]).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};

use super::{TusState, parse_id, require_version, tus_headers, write};
use crate::protocol::TusError;

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    write::terminate(&state, &parse_id(&id)?).await?;
    Ok((StatusCode::NO_CONTENT, tus_headers()))
}
