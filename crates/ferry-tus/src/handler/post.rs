//! POST (creation): makes a new upload and answers 201 with its `Location`. Covers
//! creation-with-upload (first bytes in the same request), creation-defer-length, and
//! concatenation (`Upload-Concat: partial` / `final;...`). With concatenation-unfinished a final
//! upload may name parts that are not finished yet: it is recorded as pending and concatenated
//! when the last part finishes (see [`super::pending`]).
//!
//! Hooks: pre-create may refuse or change the upload, and its answer changes the 201; a final
//! upload gets pre-create too (only a metadata change applies to it: the store names finals
//! itself), and pre-finish/post-finish once it is concatenated here.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use ferry_hooks::{HookType, HttpRequestInfo, ResponseOverride};

use super::access;
use super::hooks::{Caller, respond};
use super::pending::finish_if_ready;
use super::state::TusState;
use super::wire::{header_u64, require_version, tus_headers};
use super::write::{
    self, Checksum, check_size, first_bytes, is_offset_stream, merge, parse_checksum, request_info,
};
use crate::id::UploadId;
use crate::protocol::headers::{
    UPLOAD_CONCAT, UPLOAD_DEFER_LENGTH, UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET,
    parse_defer_length, parse_u64,
};
use crate::protocol::{ConcatRequest, Metadata, TusError};
use crate::store::{Concat, NewUpload, UploadInfo};

#[utoipa::path(
    post,
    path = "/files/",
    operation_id = "tus_create",
    tag = "tus",
    description = "tus creation: a new upload (creation-with-upload, creation-defer-length, \
        concatenation). A body of `application/offset+octet-stream` is its first bytes. Errors are \
        tus's: a text/plain message with `Tus-Resumable`.",
    params(
        ("Tus-Resumable" = String, Header, description = "The protocol version: `1.0.0`."),
        ("Upload-Length" = Option<u64>, Header, description = "The upload's size in bytes."),
        ("Upload-Defer-Length" = Option<u8>, Header, description = "`1` when the size is not known yet."),
        ("Upload-Metadata" = Option<String>, Header, description = "Comma-separated `key base64(value)` pairs."),
        ("Upload-Concat" = Option<String>, Header, description = "`partial`, or `final;` and the parts' URLs."),
        ("Upload-Checksum" = Option<String>, Header, description = "`algorithm base64(digest)` of the body."),
    ),
    request_body(content_type = "application/offset+octet-stream", description = "Optional first bytes of the upload."),
    responses(
        (status = 201, description = "Created.", headers(
            ("Location" = String, description = "The upload's URL."),
            ("Upload-Offset" = u64, description = "Bytes stored (with creation-with-upload)."),
            ("Upload-Expires" = String, description = "When an unfinished upload expires."),
            ("Tus-Resumable" = String),
        )),
        (status = 400, description = "A missing or invalid header.", body = String, content_type = "text/plain"),
        (status = 412, description = "An unsupported tus version.", body = String, content_type = "text/plain"),
        (status = 413, description = "Larger than the server's maximum size.", body = String, content_type = "text/plain"),
        (status = 415, description = "A body that is not `application/offset+octet-stream`.", body = String, content_type = "text/plain"),
        (status = 429, description = "Too many uploads from this client at once.", body = String, content_type = "text/plain"),
        (status = 502, description = "A blocking hook could not be asked.", body = String, content_type = "text/plain"),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(
    State(state): State<TusState>,
    caller: Caller,
    body: Body,
) -> Result<Response, TusError> {
    let headers = caller.headers();
    let extensions = caller.extensions();
    require_version(headers)?;
    let request = request_info(&state, &caller);
    let concat = match headers.get(UPLOAD_CONCAT) {
        Some(v) => {
            let raw = v
                .to_str()
                .map_err(|_| TusError::InvalidHeader(UPLOAD_CONCAT.as_str().to_owned()))?;
            if state.store().as_concatenate().is_none() {
                return Err(TusError::UnsupportedExtension);
            }
            Some(ConcatRequest::parse(raw, &state.config().base_path)?)
        }
        None => None,
    };
    let metadata = parse_metadata(headers)?;
    if let Some(ConcatRequest::Final(parts)) = concat {
        return create_final(&state, request.as_ref(), &caller, &parts, metadata).await;
    }

    let length = parse_u64(headers, &UPLOAD_LENGTH)?;
    let deferred = parse_defer_length(headers)?;
    match (length, deferred) {
        (Some(_), true) => {
            return Err(TusError::InvalidHeader(
                UPLOAD_DEFER_LENGTH.as_str().to_owned(),
            ));
        }
        (None, false) => return Err(TusError::MissingLength),
        (None, true) if state.store().as_defer_length().is_none() => {
            return Err(TusError::UnsupportedExtension);
        }
        _ => {}
    }
    check_size(&state, length)?;
    let with_body = is_offset_stream(headers);
    let checksum = if with_body {
        parse_checksum(&state, headers)?
    } else {
        Checksum::None
    };
    let declared = parse_u64(headers, &header::CONTENT_LENGTH)?;
    if with_body && declared.zip(length).is_some_and(|(sent, len)| sent > len) {
        return Err(TusError::BodyTooLong);
    }

    let mut new = NewUpload {
        length,
        metadata,
        partial: concat == Some(ConcatRequest::Partial),
        ..NewUpload::default()
    };
    access::claim(extensions, &mut new)?;
    let (info, mut response) = write::create(&state, request.as_ref(), new, with_body).await?;
    let mut out = created(&state, &info)?;
    if with_body {
        let write = first_bytes(&state, info, &caller, body, declared, checksum);
        let (info, finished) = write.await?.finish(&state).await?;
        merge(&mut response, finished);
        out.insert(UPLOAD_OFFSET, header_u64(info.offset));
    }
    Ok(respond(StatusCode::CREATED, out, response))
}

/// `Upload-Metadata`, parsed strictly.
fn parse_metadata(headers: &HeaderMap) -> Result<Metadata, TusError> {
    match headers.get(UPLOAD_METADATA) {
        Some(v) => Metadata::parse(
            v.to_str()
                .map_err(|_| TusError::InvalidMetadata("not ASCII".to_owned()))?,
        ),
        None => Ok(Metadata::default()),
    }
}

/// The 201 headers: `Location` and, for uploads that will expire, `Upload-Expires`.
fn created(state: &TusState, info: &UploadInfo) -> Result<HeaderMap, TusError> {
    let mut out = tus_headers();
    out.insert(header::LOCATION, state.location_header(&info.id)?);
    state.insert_expires(info, &mut out);
    Ok(out)
}

/// A final upload from partial uploads of this server: concatenated at once when every part is
/// finished, else (concatenation-unfinished) recorded as pending.
async fn create_final(
    state: &TusState,
    request: Option<&HttpRequestInfo>,
    caller: &Caller,
    parts: &[UploadId],
    metadata: Metadata,
) -> Result<Response, TusError> {
    let headers = caller.headers();
    if headers.contains_key(UPLOAD_LENGTH) {
        return Err(TusError::InvalidHeader(UPLOAD_LENGTH.as_str().to_owned()));
    }
    let concatenate = state
        .store()
        .as_concatenate()
        .ok_or(TusError::UnsupportedExtension)?;
    let unfinished = state.store().as_concatenate_unfinished();
    let mut total = 0u64;
    let mut all_finished = true;
    let mut all_known = true;
    for part in parts {
        let info = match state.store().info(part).await {
            Ok(info) => info,
            Err(crate::store::StoreError::NotFound) => return Err(TusError::InvalidConcatParts),
            Err(e) => return Err(e.into()),
        };
        // Another subject's part is as unknown as a missing one.
        if info.concat != Some(Concat::Partial)
            || !access::may_use(caller.extensions(), info.owner.as_deref())
        {
            return Err(TusError::InvalidConcatParts);
        }
        if !info.is_complete() {
            if unfinished.is_none() {
                return Err(TusError::InvalidConcatParts);
            }
            all_finished = false;
        }
        all_known &= info.length.is_some();
        total = total.saturating_add(info.length.unwrap_or(info.offset));
    }
    check_size(state, Some(total))?;
    access::claim_final(caller.extensions(), total, all_known)?;
    let owner = access::owner(caller.extensions());
    let mut response = ResponseOverride::default();
    let mut metadata = metadata;
    if let Some(request) = request {
        let mut new = NewUpload {
            length: Some(total),
            metadata,
            ..NewUpload::default()
        };
        response = state.pre_create(request, &mut new, Some(parts)).await?;
        if new.id.is_some() || new.storage_key.is_some() {
            tracing::warn!("a hook's id or storage key for a final upload is ignored");
        }
        metadata = new.metadata;
    }
    let info = match unfinished {
        Some(unfinished) if !all_finished => {
            let info = unfinished.create_pending(parts, metadata, owner).await?;
            // A part may have finished since it was checked, before this final could be found:
            // look again under the final's lock.
            let _lease = state.lock().acquire(&info.id).await?;
            finish_if_ready(state, info).await?
        }
        _ => concatenate.concatenate(parts, metadata, owner).await?,
    };
    let (upload, length, pending) = (&info.id, info.length, info.pending);
    tracing::info!(%upload, parts = parts.len(), length, pending, "final upload made");
    if let Some(request) = request {
        state.notify(HookType::PostCreate, &info, request);
        if info.is_complete() {
            let finished = state.finished(&info, request).await?;
            merge(&mut response, finished);
        }
    }
    Ok(respond(
        StatusCode::CREATED,
        created(state, &info)?,
        response,
    ))
}
