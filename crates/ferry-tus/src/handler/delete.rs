//! DELETE (termination): ends any request in flight for the upload, then removes it and its
//! bytes ([`super::write::terminate`]).

use axum::extract::{OriginalUri, Path, State};
use axum::http::{Extensions, HeaderMap, Method, StatusCode};
use axum::response::Response;

use super::hooks::{Caller, respond};
use super::{TusState, parse_id, require_version, tus_headers, write};
use crate::protocol::TusError;

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    extensions: Extensions,
    headers: HeaderMap,
) -> Result<Response, TusError> {
    require_version(&headers)?;
    let caller = Caller {
        method: &method,
        uri: &uri,
        extensions: &extensions,
        headers: &headers,
    };
    let response = write::terminate(&state, &parse_id(&id)?, &caller).await?;
    Ok(respond(StatusCode::NO_CONTENT, tus_headers(), response))
}
