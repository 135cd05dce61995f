//! The IETF httpbis draft "Resumable Uploads for HTTP" (interop version 8) on the tus endpoint,
//! behind [`super::TusConfig::ietf_draft`]. The router sends a request carrying
//! `Upload-Draft-Interop-Version: 8` here and any other to tus. Both share the uploads, the
//! store, the locks and the write path ([`super::write`]); errors render through
//! [`super::error::DraftError`].
//!
//! - POST (creation): `Upload-Complete` is required; `Upload-Length` is optional (unknown
//!   lengths use the store's defer-length capability); the body, of any media type, holds the
//!   first bytes. 201 with `Location`, `Upload-Offset`, `Upload-Complete`, `Upload-Limit`.
//! - HEAD (offset retrieval): 204 with `Upload-Offset`, `Upload-Complete`, `Upload-Length` when
//!   known, `Upload-Limit`, `Cache-Control: no-store`.
//! - PATCH (append): `Content-Type: application/partial-upload`; `Upload-Complete: ?1` fixes the
//!   length at offset + body length. Errors the draft names are RFC 9457 problem documents.
//! - DELETE (cancellation): the tus termination.
//!
//! No `104 Upload Resumption Supported` interim answer is sent: axum/hyper cannot send
//! informational responses from a handler here, and browsers cannot see them anyway, so clients
//! create first and append after (the draft allows a server to omit them).

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::hooks::{Caller, respond};
use super::write::{merge, request_info};

use super::error::{DraftError, insert_interop, without_body};
use super::path_id::Id;
use super::state::TusState;
use super::wire::header_u64;
use super::write::{self, Checksum, Write, check_size, first_bytes};
use crate::protocol::TusError;
use crate::protocol::headers::{UPLOAD_LENGTH, UPLOAD_OFFSET, parse_u64};
use crate::protocol::ietf::{
    UPLOAD_COMPLETE, UPLOAD_LIMIT, is_partial_upload, render_sf_bool, render_upload_limit,
    upload_complete,
};
use crate::store::{NewUpload, UploadInfo};

/// POST on the collection: creation, with the first bytes in the body.
pub(super) async fn create(
    State(state): State<TusState>,
    caller: Caller,
    body: Body,
) -> Result<Response, DraftError> {
    let headers = caller.headers();
    let extensions = caller.extensions();
    let complete = required_complete(headers)?;
    let length = parse_u64(headers, &UPLOAD_LENGTH)?;
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;
    // With `?1` the body is the whole upload: its length is the upload's length.
    let length = match (complete, length, declared) {
        (true, Some(len), Some(sent)) if len != sent => return Err(DraftError::Inconsistent),
        (true, len, sent) => len.or(sent),
        (false, len, _) => len,
    };
    check_size(&state, length)?;
    if declared.zip(length).is_some_and(|(sent, len)| sent > len) {
        return Err(TusError::BodyTooLong.into());
    }
    if length.is_none() && state.store().as_defer_length().is_none() {
        return Err(TusError::UnsupportedExtension.into());
    }
    let mut new = NewUpload {
        length,
        ..NewUpload::default()
    };
    super::access::claim(extensions, &mut new)?;
    let request = request_info(&state, &caller);
    let bytes_follow = declared != Some(0);
    let (mut info, mut response) =
        write::create(&state, request.as_ref(), new, bytes_follow).await?;
    let location = state.location_header(&info.id)?;
    // An empty body with `?1` was given its length above; nothing is left to write.
    if bytes_follow {
        let write = first_bytes(&state, info, &caller, body, declared, Checksum::None);
        let mut write = write.await?;
        if complete && write.info.length.is_none() {
            let at = write.info.offset;
            write.set_length(&state, at).await?;
        }
        let (done, finished) = write.finish(&state).await?;
        merge(&mut response, finished);
        info = done;
    }
    let mut out = state_headers(&state, &info);
    out.insert(header::LOCATION, location);
    Ok(respond(StatusCode::CREATED, out, response))
}

/// HEAD on an upload: offset retrieval. Taking the lock ends an append still in flight, so the
/// answer is its durable offset.
pub(super) async fn offset(State(state): State<TusState>, Id(id): Id) -> Response {
    let offset = async {
        let _lease = state.lock().acquire(&id).await?;
        let info = state.store().info(&id).await?;
        state.check_not_expired(&info)?;
        let mut out = state_headers(&state, &info);
        out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(length) = info.length {
            out.insert(UPLOAD_LENGTH, header_u64(length));
        }
        Ok::<_, DraftError>(out)
    };
    match offset.await {
        Ok(out) => (StatusCode::NO_CONTENT, out).into_response(),
        Err(e) => without_body(e.into_response()),
    }
}

/// PATCH on an upload: append.
pub(super) async fn append(
    State(state): State<TusState>,
    Id(id): Id,
    caller: Caller,
    body: Body,
) -> Result<Response, DraftError> {
    let headers = caller.headers();
    if !is_partial_upload(headers) {
        return Err(DraftError::UnsupportedMediaType);
    }
    let offset = parse_u64(headers, &UPLOAD_OFFSET)?.ok_or(TusError::MissingOffset)?;
    let complete = required_complete(headers)?;
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;

    let mut write = Write::begin(&state, &id, &caller).await?;
    if write.info.is_complete() {
        return Err(DraftError::Completed);
    }
    if write.info.offset != offset {
        return Err(DraftError::Mismatch {
            expected: write.info.offset,
            provided: offset,
        });
    }
    if let (true, Some(sent)) = (complete, declared) {
        let total = offset.saturating_add(sent);
        match write.info.length {
            Some(len) if len != total => return Err(DraftError::Inconsistent),
            Some(_) => {}
            None => {
                check_size(&state, Some(total))?;
                write.set_length(&state, total).await?;
            }
        }
    }
    let new_offset = write.append(&state, body, declared, Checksum::None).await?;
    if complete {
        match write.info.length {
            None => write.set_length(&state, new_offset).await?,
            Some(len) if len != new_offset => return Err(DraftError::Inconsistent),
            Some(_) => {}
        }
    }
    let (info, response) = write.finish(&state).await?;
    Ok(respond(
        StatusCode::NO_CONTENT,
        state_headers(&state, &info),
        response,
    ))
}

/// DELETE on an upload: cancellation, which is the tus termination.
pub(super) async fn cancel(
    State(state): State<TusState>,
    Id(id): Id,
    caller: Caller,
) -> Result<Response, DraftError> {
    let response = write::terminate(&state, &id, &caller).await?;
    let mut out = HeaderMap::new();
    insert_interop(&mut out);
    Ok(respond(StatusCode::NO_CONTENT, out, response))
}

/// `Upload-Complete`, required on creation and append.
fn required_complete(headers: &HeaderMap) -> Result<bool, TusError> {
    let invalid = || TusError::InvalidHeader(UPLOAD_COMPLETE.as_str().to_owned());
    upload_complete(headers).ok_or_else(invalid)
}

/// The state headers every successful draft answer carries.
fn state_headers(state: &TusState, info: &UploadInfo) -> HeaderMap {
    let mut out = HeaderMap::new();
    insert_interop(&mut out);
    out.insert(UPLOAD_OFFSET, header_u64(info.offset));
    out.insert(UPLOAD_COMPLETE, render_sf_bool(info.is_complete()));
    if let Some(limit) = render_upload_limit(state.config().max_size) {
        out.insert(UPLOAD_LIMIT, limit);
    }
    state.insert_expires(info, &mut out);
    out
}
