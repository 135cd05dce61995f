//! PATCH: appends the body at `Upload-Offset` and answers 204 with the new offset. Also sets a
//! deferred `Upload-Length` and verifies `Upload-Checksum`. The write itself is the shared
//! [`super::write`] path, which also finishes the pending final uploads waiting for a partial
//! upload this PATCH completes (`concatenation-unfinished`).

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;

use super::hooks::{Caller, respond};
use super::path_id::Id;
use super::state::TusState;
use super::wire::{header_u64, require_version, tus_headers};
use super::write::{Write, check_size, is_offset_stream, parse_checksum};
use crate::protocol::TusError;
use crate::protocol::headers::{UPLOAD_LENGTH, UPLOAD_OFFSET, parse_u64};

#[utoipa::path(
    patch,
    path = "/files/{id}",
    operation_id = "tus_append",
    tag = "tus",
    description = "Appends the body at `Upload-Offset`. Also sets a deferred `Upload-Length` and \
        verifies `Upload-Checksum`.",
    params(
        ("id" = String, Path, description = "The upload's id."),
        ("Tus-Resumable" = String, Header, description = "The protocol version: `1.0.0`."),
        ("Upload-Offset" = u64, Header, description = "Where the body starts; must equal the upload's offset."),
        ("Upload-Length" = Option<u64>, Header, description = "The size, once, for a deferred-length upload."),
        ("Upload-Checksum" = Option<String>, Header, description = "`algorithm base64(digest)` of the body."),
    ),
    request_body(content_type = "application/offset+octet-stream", description = "The next bytes of the upload."),
    responses(
        (status = 204, description = "Stored.", headers(
            ("Upload-Offset" = u64, description = "The new offset."),
            ("Upload-Expires" = String),
            ("Tus-Resumable" = String),
        )),
        (status = 400, description = "A missing or invalid header or checksum.", body = String, content_type = "text/plain"),
        (status = 403, description = "The upload is complete, or a final upload.", body = String, content_type = "text/plain"),
        (status = 404, description = "No such upload.", body = String, content_type = "text/plain"),
        (status = 409, description = "`Upload-Offset` is not the upload's offset.", body = String, content_type = "text/plain"),
        (status = 410, description = "The upload expired.", body = String, content_type = "text/plain"),
        (status = 412, description = "An unsupported tus version.", body = String, content_type = "text/plain"),
        (status = 413, description = "The body runs past the upload's length.", body = String, content_type = "text/plain"),
        (status = 415, description = "The body is not `application/offset+octet-stream`.", body = String, content_type = "text/plain"),
        (status = 460, description = "Checksum mismatch.", body = String, content_type = "text/plain"),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(
    State(state): State<TusState>,
    Id(id): Id,
    caller: Caller,
    body: Body,
) -> Result<Response, TusError> {
    let headers = caller.headers();
    require_version(headers)?;
    if !is_offset_stream(headers) {
        return Err(TusError::UnsupportedMediaType);
    }
    let offset = parse_u64(headers, &UPLOAD_OFFSET)?.ok_or(TusError::MissingOffset)?;
    let new_length = parse_u64(headers, &UPLOAD_LENGTH)?;
    let checksum = parse_checksum(&state, headers)?;
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;
    check_size(&state, new_length)?;

    let mut write = Write::begin(&state, &id, &caller).await?;
    if write.info.offset != offset {
        return Err(TusError::OffsetMismatch {
            sent: offset,
            current: write.info.offset,
        });
    }
    if let Some(len) = new_length {
        match write.info.length {
            Some(current) if current != len => return Err(TusError::LengthImmutable),
            Some(_) => {}
            None if len < offset => {
                return Err(TusError::InvalidHeader(UPLOAD_LENGTH.as_str().to_owned()));
            }
            None => write.set_length(&state, len).await?,
        }
    }
    write.append(&state, body, declared, checksum).await?;
    let (info, response) = write.finish(&state).await?;
    let mut out = tus_headers();
    out.insert(UPLOAD_OFFSET, header_u64(info.offset));
    state.insert_expires(&info, &mut out);
    Ok(respond(StatusCode::NO_CONTENT, out, response))
}
