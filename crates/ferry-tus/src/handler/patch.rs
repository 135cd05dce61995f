//! PATCH: appends the body at `Upload-Offset` and answers 204 with the new offset. Also sets a
//! deferred `Upload-Length` and verifies `Upload-Checksum`. [`append`] is shared with
//! creation-with-upload. A partial upload that a PATCH finishes completes the pending final
//! uploads waiting for it (`concatenation-unfinished`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{Extensions, HeaderMap, StatusCode, header};

use super::body::{Bounded, GuardedBody, Trailers, write_error};
use super::limits::SlotGuard;
use super::pending::finish_finals_of;
use super::{TusState, header_u64, now_secs, parse_id, require_version, tus_headers};
use crate::id::UploadId;
use crate::lock::UploadGuard;
use crate::protocol::checksum::{ALL, Digests, Expected, HashingStream};
use crate::protocol::headers::{UPLOAD_CHECKSUM, UPLOAD_LENGTH, UPLOAD_OFFSET, parse_u64};
use crate::protocol::{OFFSET_OCTET_STREAM, TusError};
use crate::store::{Concat, UploadInfo};

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    extensions: Extensions,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    let id = parse_id(&id)?;
    if !is_offset_stream(&headers) {
        return Err(TusError::UnsupportedMediaType);
    }
    let offset = parse_u64(&headers, &UPLOAD_OFFSET)?.ok_or(TusError::MissingOffset)?;
    let new_length = parse_u64(&headers, &UPLOAD_LENGTH)?;
    let checksum = parse_checksum(&state, &headers)?;
    let declared = parse_u64(&headers, &header::CONTENT_LENGTH)?;
    if let (Some(max), Some(len)) = (state.config().max_size, new_length) {
        if len > max {
            return Err(TusError::TooLarge);
        }
    }

    let (_slot, guard, mut info) = begin_write(&state, &id, &extensions, &headers).await?;
    if info.offset != offset {
        return Err(TusError::OffsetMismatch {
            sent: offset,
            current: info.offset,
        });
    }
    if let Some(len) = new_length {
        match info.length {
            Some(current) if current != len => return Err(TusError::LengthImmutable),
            Some(_) => {}
            None if len < info.offset => {
                return Err(TusError::InvalidHeader(UPLOAD_LENGTH.as_str().to_owned()));
            }
            None => {
                let defer = state
                    .store()
                    .as_defer_length()
                    .ok_or(TusError::UnsupportedExtension)?;
                info = defer.set_length(&id, len).await?;
            }
        }
    }

    let new_offset = append(&state, &id, &info, body, declared, checksum, &guard).await?;
    tracing::debug!(upload = %id, from = offset, to = new_offset, "bytes stored");
    if info.concat == Some(Concat::Partial) && info.length == Some(new_offset) {
        finish_finals_of(&state, &id).await;
    }
    let mut out = tus_headers();
    out.insert(UPLOAD_OFFSET, header_u64(new_offset));
    info.offset = new_offset;
    info.updated_at = now_secs();
    state.insert_expires(&info, &mut out);
    Ok((StatusCode::NO_CONTENT, out))
}

/// The start of every append (tus and IETF draft): takes the client's slot and the upload's lock
/// (which ends a request still in flight for it), then loads the upload, refusing an expired
/// one (410) and a final one (403).
pub(super) async fn begin_write(
    state: &TusState,
    id: &UploadId,
    extensions: &Extensions,
    headers: &HeaderMap,
) -> Result<(Option<SlotGuard>, UploadGuard, UploadInfo), TusError> {
    let slot = state.slots().take(extensions, headers)?;
    let guard = state.locks().lock(id).await;
    let info = state.store().info(id).await?;
    state.check_not_expired(&info)?;
    if info.is_final() {
        return Err(TusError::FinalUpload);
    }
    Ok((slot, guard, info))
}

/// `Content-Type: application/offset+octet-stream` (parameters are not allowed).
pub(super) fn is_offset_stream(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes()) == Some(OFFSET_OCTET_STREAM.as_bytes())
}

/// How a body's checksum is given (checksum and checksum-trailer).
#[derive(Debug)]
pub(super) enum Checksum {
    None,
    Header(Expected),
    /// `Trailer: Upload-Checksum`: the digest follows the body; every algorithm is hashed.
    Trailer,
}

/// `Upload-Checksum` as a header or announced as a trailer; 400 when the store cannot discard a
/// failed chunk.
pub(super) fn parse_checksum(state: &TusState, headers: &HeaderMap) -> Result<Checksum, TusError> {
    let trailer = headers
        .get_all(header::TRAILER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|name| name.trim().eq_ignore_ascii_case(UPLOAD_CHECKSUM.as_str()));
    let raw = headers.get(UPLOAD_CHECKSUM);
    if raw.is_none() && !trailer {
        return Ok(Checksum::None);
    }
    if state.store().as_stage().is_none() {
        return Err(TusError::UnsupportedExtension);
    }
    match raw {
        Some(raw) => {
            let raw = raw.to_str().map_err(|_| TusError::InvalidChecksum)?;
            Expected::parse(raw).map(Checksum::Header)
        }
        None => Ok(Checksum::Trailer),
    }
}

/// Checks the trailer's digest against what was hashed.
fn verify_trailer(trailers: &Trailers, digests: &Digests) -> Result<(), TusError> {
    let trailers = trailers.lock().unwrap_or_else(|p| p.into_inner()).take();
    let raw = trailers
        .as_ref()
        .and_then(|t| t.get(UPLOAD_CHECKSUM))
        .ok_or(TusError::InvalidChecksum)?;
    let expected = Expected::parse(raw.to_str().map_err(|_| TusError::InvalidChecksum)?)?;
    if digests.matches(&expected) {
        Ok(())
    } else {
        Err(TusError::ChecksumMismatch)
    }
}

/// Streams `body` into the upload at `info.offset` and returns the new offset. Never stores
/// past the upload's length (or the maximum size while the length is deferred). With a
/// checksum, a chunk that does not match, or that did not arrive whole, is cut off again.
pub(super) async fn append(
    state: &TusState,
    id: &UploadId,
    info: &UploadInfo,
    body: Body,
    declared: Option<u64>,
    checksum: Checksum,
    guard: &UploadGuard,
) -> Result<u64, TusError> {
    let offset = info.offset;
    let limit = info.length.or(state.config().max_size);
    let remaining = limit.map_or(u64::MAX, |l| l.saturating_sub(offset));
    if declared.is_some_and(|n| n > remaining) {
        return Err(TusError::BodyTooLong);
    }
    let idle = state.config().idle_timeout;
    let guarded = GuardedBody::new(body, guard.cancelled.clone(), idle);
    let trailers = guarded.trailers();
    let mut body = Bounded::new(guarded, remaining);
    let store = state.store();
    let algorithms: &[_] = match &checksum {
        Checksum::None => &[],
        Checksum::Header(expected) => std::slice::from_ref(&expected.algorithm),
        Checksum::Trailer => &ALL,
    };
    // A checksummed chunk is held aside and appended only once its digest matched.
    let stage = match checksum {
        Checksum::None => None,
        _ => Some(store.as_stage().ok_or(TusError::UnsupportedExtension)?),
    };
    let (written, digests) = match stage {
        None => (store.write(id, offset, &mut body).await, None),
        Some(stage) => {
            let mut hashing = HashingStream::new(&mut body, algorithms);
            let staged = stage.stage(id, offset, &mut hashing).await;
            (staged.map(|n| offset + n), Some(hashing.finish()))
        }
    };
    let outcome = match written {
        // A body may run past the length: what fitted is stored, the rest is refused. Reading
        // on to the end also collects the trailers.
        Ok(n) if n - offset == remaining && body.went_past_limit().await => {
            Err(TusError::BodyTooLong)
        }
        Ok(n) => match (&checksum, digests) {
            (Checksum::Header(expected), Some(d)) if !d.matches(expected) => {
                Err(TusError::ChecksumMismatch)
            }
            (Checksum::Trailer, Some(d)) => verify_trailer(&trailers, &d).map(|()| n),
            _ => Ok(n),
        },
        Err(e) => Err(write_error(e)),
    };
    match (stage, outcome) {
        (None, outcome) => outcome,
        (Some(stage), Ok(_)) => Ok(stage.commit(id).await?),
        (Some(stage), Err(e)) => {
            stage.discard(id).await?;
            Err(e)
        }
    }
}
