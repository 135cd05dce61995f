//! The IETF httpbis draft "Resumable Uploads for HTTP" (interop version 8) on the tus endpoint,
//! behind [`super::TusConfig::ietf_draft`]. A request carrying
//! `Upload-Draft-Interop-Version: 8` is answered by the draft's rules; any other request goes to
//! the tus handler unchanged. Both share the uploads, the store, the locks and the write path
//! ([`super::patch::begin_write`], [`super::patch::append`]).
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
use axum::extract::{Path, State};
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::patch::{Checksum, append, begin_write};
use super::pending::finish_finals_of;
use super::{TusState, delete, head, header_u64, parse_id, patch, post};
use crate::id::UploadId;
use crate::protocol::TusError;
use crate::protocol::headers::{TUS_RESUMABLE, UPLOAD_LENGTH, UPLOAD_OFFSET, parse_u64};
use crate::protocol::ietf::{
    COMPLETED_UPLOAD, INCONSISTENT_UPLOAD_LENGTH, INTEROP_VERSION, MISMATCHING_UPLOAD_OFFSET,
    UPLOAD_COMPLETE, UPLOAD_DRAFT_INTEROP_VERSION, UPLOAD_LIMIT, is_draft_request,
    is_partial_upload, render_sf_bool, render_upload_limit, upload_complete,
};
use crate::store::{Concat, NewUpload, UploadInfo};

/// An error answered to a draft request.
#[derive(Debug)]
enum DraftError {
    /// A tus error, answered with its status and message.
    Tus(TusError),
    /// An RFC 9457 problem document of a type the draft defines.
    Problem {
        status: StatusCode,
        kind: &'static str,
        title: &'static str,
        offsets: Option<(u64, u64)>,
    },
    /// The append's body is not `application/partial-upload`.
    UnsupportedMediaType,
}

impl From<TusError> for DraftError {
    fn from(e: TusError) -> Self {
        match e {
            TusError::OffsetMismatch { sent, current } => mismatch(current, sent),
            e => Self::Tus(e),
        }
    }
}

fn mismatch(expected: u64, provided: u64) -> DraftError {
    DraftError::Problem {
        status: StatusCode::CONFLICT,
        kind: MISMATCHING_UPLOAD_OFFSET,
        title: "Upload-Offset does not match the upload's offset",
        offsets: Some((expected, provided)),
    }
}

fn completed() -> DraftError {
    DraftError::Problem {
        status: StatusCode::BAD_REQUEST,
        kind: COMPLETED_UPLOAD,
        title: "the upload is already complete",
        offsets: None,
    }
}

fn inconsistent() -> DraftError {
    DraftError::Problem {
        status: StatusCode::BAD_REQUEST,
        kind: INCONSISTENT_UPLOAD_LENGTH,
        title: "the request's length conflicts with the upload's length",
        offsets: None,
    }
}

fn invalid(name: &axum::http::HeaderName) -> DraftError {
    DraftError::Tus(TusError::InvalidHeader(name.as_str().to_owned()))
}

impl IntoResponse for DraftError {
    fn into_response(self) -> Response {
        let mut response = match self {
            Self::Tus(e) => {
                let mut r = e.into_response();
                r.headers_mut().remove(TUS_RESUMABLE);
                r
            }
            Self::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/partial-upload\n",
            )
                .into_response(),
            Self::Problem {
                status,
                kind,
                title,
                offsets,
            } => {
                let mut doc = serde_json::json!({ "type": kind, "title": title });
                if let Some((expected, provided)) = offsets {
                    doc["expected-offset"] = expected.into();
                    doc["provided-offset"] = provided.into();
                }
                (
                    status,
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/problem+json"),
                    )],
                    doc.to_string(),
                )
                    .into_response()
            }
        };
        insert_interop(response.headers_mut());
        response
    }
}

fn insert_interop(out: &mut HeaderMap) {
    out.insert(
        UPLOAD_DRAFT_INTEROP_VERSION,
        HeaderValue::from_static(INTEROP_VERSION),
    );
}

fn is_draft(state: &TusState, headers: &HeaderMap) -> bool {
    state.config().ietf_draft && is_draft_request(headers)
}

/// `Upload-Complete`, required on creation and append.
fn required_complete(headers: &HeaderMap) -> Result<bool, DraftError> {
    upload_complete(headers)
        .ok()
        .flatten()
        .ok_or_else(|| invalid(&UPLOAD_COMPLETE))
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
    out
}

/// Sets the length of an upload whose length was unknown (defer-length capability).
async fn set_length(
    state: &TusState,
    id: &UploadId,
    length: u64,
) -> Result<UploadInfo, DraftError> {
    let defer = state
        .store()
        .as_defer_length()
        .ok_or(TusError::UnsupportedExtension)?;
    Ok(defer.set_length(id, length).await.map_err(TusError::from)?)
}

/// POST on the collection: draft creation, else tus.
pub(super) async fn post(
    State(state): State<TusState>,
    extensions: Extensions,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !is_draft(&state, &headers) {
        return post::handle(State(state), extensions, headers, body)
            .await
            .into_response();
    }
    create(&state, &extensions, &headers, body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// HEAD on an upload: draft offset retrieval, else tus.
pub(super) async fn head(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !is_draft(&state, &headers) {
        return head::handle(State(state), Path(id), headers).await;
    }
    match offset(&state, &id).await {
        Ok(out) => (StatusCode::NO_CONTENT, out).into_response(),
        Err(e) => {
            let mut response = e.into_response();
            *response.body_mut() = Body::empty();
            response
        }
    }
}

/// PATCH on an upload: draft append, else tus.
pub(super) async fn patch(
    State(state): State<TusState>,
    Path(id): Path<String>,
    extensions: Extensions,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !is_draft(&state, &headers) {
        return patch::handle(State(state), Path(id), extensions, headers, body)
            .await
            .into_response();
    }
    append_draft(&state, &id, &extensions, &headers, body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// DELETE on an upload: draft cancellation (the tus termination), else tus.
pub(super) async fn delete(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !is_draft(&state, &headers) {
        return delete::handle(State(state), Path(id), headers)
            .await
            .into_response();
    }
    match delete::terminate(&state, &id).await {
        Ok(()) => {
            let mut out = HeaderMap::new();
            insert_interop(&mut out);
            (StatusCode::NO_CONTENT, out).into_response()
        }
        Err(e) => DraftError::from(e).into_response(),
    }
}

async fn create(
    state: &TusState,
    extensions: &Extensions,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, DraftError> {
    let complete = required_complete(headers)?;
    let length = parse_u64(headers, &UPLOAD_LENGTH)?;
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;
    // With `?1` the body is the whole upload: its length is the upload's length.
    let length = match (complete, length, declared) {
        (true, Some(len), Some(sent)) if len != sent => return Err(inconsistent()),
        (true, len, sent) => len.or(sent),
        (false, len, _) => len,
    };
    if let (Some(max), Some(len)) = (state.config().max_size, length) {
        if len > max {
            return Err(TusError::TooLarge.into());
        }
    }
    if declared.zip(length).is_some_and(|(sent, len)| sent > len) {
        return Err(TusError::BodyTooLong.into());
    }
    if length.is_none() && state.store().as_defer_length().is_none() {
        return Err(TusError::UnsupportedExtension.into());
    }
    let mut info = state
        .store()
        .create(NewUpload {
            length,
            metadata: Default::default(),
            partial: false,
        })
        .await
        .map_err(TusError::from)?;
    tracing::info!(upload = %info.id, length, "upload created (IETF draft)");
    let id = UploadId::parse(&info.id).ok_or(TusError::Internal)?;
    let location =
        HeaderValue::from_str(&state.location(&info.id)).map_err(|_| TusError::Internal)?;
    if declared != Some(0) {
        let (_slot, guard, current) = begin_write(state, &id, extensions, headers).await?;
        // The upload exists whatever happens to its first bytes: answer 201 with what was
        // durably stored, and let the client resume from there.
        info = current;
        info.offset = match append(state, &id, &info, body, declared, Checksum::None, &guard).await
        {
            Ok(offset) => offset,
            Err(e) => {
                tracing::debug!(upload = %id, error = %e, "first bytes not stored whole");
                state
                    .store()
                    .info(&id)
                    .await
                    .map_err(TusError::from)?
                    .offset
            }
        };
        drop(guard);
    }
    if complete && info.length.is_none() {
        info = set_length(state, &id, info.offset).await?;
    }
    let mut out = state_headers(state, &info);
    out.insert(header::LOCATION, location);
    state.insert_expires(&info, &mut out);
    Ok((StatusCode::CREATED, out).into_response())
}

async fn offset(state: &TusState, raw_id: &str) -> Result<HeaderMap, DraftError> {
    let id = parse_id(raw_id)?;
    // Taking the lock ends an append still in flight: the answer is its durable offset.
    let _guard = state.locks().lock(&id).await;
    let info = state.store().info(&id).await.map_err(TusError::from)?;
    state.check_not_expired(&info)?;
    let mut out = state_headers(state, &info);
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(length) = info.length {
        out.insert(UPLOAD_LENGTH, header_u64(length));
    }
    state.insert_expires(&info, &mut out);
    Ok(out)
}

async fn append_draft(
    state: &TusState,
    raw_id: &str,
    extensions: &Extensions,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, DraftError> {
    let id = parse_id(raw_id)?;
    if !is_partial_upload(headers) {
        return Err(DraftError::UnsupportedMediaType);
    }
    let offset = parse_u64(headers, &UPLOAD_OFFSET)?.ok_or(TusError::MissingOffset)?;
    let complete = required_complete(headers)?;
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;

    let (_slot, guard, mut info) = begin_write(state, &id, extensions, headers).await?;
    if info.is_complete() {
        return Err(completed());
    }
    if info.offset != offset {
        return Err(mismatch(info.offset, offset));
    }
    if complete {
        if let Some(sent) = declared {
            let total = offset.saturating_add(sent);
            match info.length {
                Some(len) if len != total => return Err(inconsistent()),
                Some(_) => {}
                None => {
                    if state.config().max_size.is_some_and(|max| total > max) {
                        return Err(TusError::TooLarge.into());
                    }
                    info = set_length(state, &id, total).await?;
                }
            }
        }
    }

    let new_offset = append(state, &id, &info, body, declared, Checksum::None, &guard).await?;
    tracing::debug!(upload = %id, from = offset, to = new_offset, "bytes stored (IETF draft)");
    if complete {
        match info.length {
            None => info = set_length(state, &id, new_offset).await?,
            Some(len) if len != new_offset => return Err(inconsistent()),
            Some(_) => {}
        }
    }
    info.offset = new_offset;
    if info.concat == Some(Concat::Partial) && info.length == Some(new_offset) {
        finish_finals_of(state, &id).await;
    }
    let mut out = state_headers(state, &info);
    state.insert_expires(&info, &mut out);
    Ok((StatusCode::NO_CONTENT, out).into_response())
}
