//! OPTIONS: what this server supports. `Tus-Resumable` is ignored on this request.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};

use super::state::TusState;
use super::wire::{header_u64, tus_headers};
use crate::protocol::TUS_VERSION;
use crate::protocol::checksum::ALGORITHMS;
use crate::protocol::headers::{
    TUS_CHECKSUM_ALGORITHM, TUS_EXTENSION, TUS_MAX_SIZE, TUS_VERSION as TUS_VERSION_HEADER,
};

/// One description for both paths: the answer does not depend on the upload.
#[utoipa::path(
    options,
    path = "/files/",
    operation_id = "tus_options",
    tag = "tus",
    description = "What the server supports (no token needed; `Tus-Resumable` is ignored). The \
        same answer at `/files/{id}`. A CORS preflight (`Origin` and \
        `Access-Control-Request-Method`) is answered 204 with the CORS headers instead.",
    responses(
        (status = 204, description = "The server's capabilities.", headers(
            ("Tus-Version" = String),
            ("Tus-Extension" = String),
            ("Tus-Max-Size" = u64),
            ("Tus-Checksum-Algorithm" = String),
            ("Tus-Resumable" = String),
        )),
    ),
)]
pub(super) async fn handle(State(state): State<TusState>) -> (StatusCode, HeaderMap) {
    let mut headers = tus_headers();
    headers.insert(TUS_VERSION_HEADER, HeaderValue::from_static(TUS_VERSION));
    if let Ok(v) = HeaderValue::from_str(&state.extensions()) {
        headers.insert(TUS_EXTENSION, v);
    }
    if let Some(max) = state.config().max_size {
        headers.insert(TUS_MAX_SIZE, header_u64(max));
    }
    if state.store().as_stage().is_some() {
        headers.insert(TUS_CHECKSUM_ALGORITHM, HeaderValue::from_static(ALGORITHMS));
    }
    (StatusCode::NO_CONTENT, headers)
}

/// OPTIONS on an upload: the same answer as on the collection (its own route so the document
/// lists both paths).
#[utoipa::path(
    options,
    path = "/files/{id}",
    operation_id = "tus_options_upload",
    tag = "tus",
    description = "The server's capabilities, as `OPTIONS /files/`.",
    params(("id" = String, Path, description = "Any upload id; it is not looked up.")),
    responses((status = 204, description = "The server's capabilities.")),
)]
pub(super) async fn on_upload(state: State<TusState>) -> (StatusCode, HeaderMap) {
    handle(state).await
}
