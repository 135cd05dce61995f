//! DELETE (termination): ends any request in flight for the upload, then removes it and its
//! bytes ([`super::write::terminate`]).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::hooks::{Caller, respond};
use super::path_id::Id;
use super::state::TusState;
use super::wire::{require_version, tus_headers};
use super::write;
use crate::protocol::TusError;

#[utoipa::path(
    delete,
    path = "/files/{id}",
    operation_id = "tus_terminate",
    tag = "tus",
    description = "termination: removes the upload and its bytes.",
    params(
        ("id" = String, Path, description = "The upload's id."),
        ("Tus-Resumable" = String, Header, description = "The protocol version: `1.0.0`."),
    ),
    responses(
        (status = 204, description = "Removed.", headers(("Tus-Resumable" = String))),
        (status = 404, description = "No such upload.", body = String, content_type = "text/plain"),
        (status = 412, description = "An unsupported tus version.", body = String, content_type = "text/plain"),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(
    State(state): State<TusState>,
    Id(id): Id,
    caller: Caller,
) -> Result<Response, TusError> {
    let headers = caller.headers();
    require_version(headers)?;
    let response = write::terminate(&state, &id, &caller).await?;
    Ok(respond(StatusCode::NO_CONTENT, tus_headers(), response))
}
