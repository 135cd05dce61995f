//! PATCH: appends the body at `Upload-Offset` and answers 204 with the new offset.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use futures_util::TryStreamExt;
use tokio::io::AsyncReadExt;
use tokio_util::io::StreamReader;

use super::{TusState, header_u64, parse_id, require_version, tus_resumable};
use crate::protocol::headers::{UPLOAD_OFFSET, parse_u64};
use crate::protocol::{OFFSET_OCTET_STREAM, TusError};

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    let id = parse_id(&id)?;
    let content_type = headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes());
    if content_type != Some(OFFSET_OCTET_STREAM.as_bytes()) {
        return Err(TusError::UnsupportedMediaType);
    }
    let offset = parse_u64(&headers, &UPLOAD_OFFSET)?.ok_or(TusError::MissingOffset)?;
    let declared = parse_u64(&headers, &header::CONTENT_LENGTH)?;

    let _guard = state.locks().lock(&id).await;
    let info = state.store().info(&id).await?;
    if info.offset != offset {
        return Err(TusError::OffsetMismatch {
            sent: offset,
            current: info.offset,
        });
    }
    let remaining = info.length.map_or(u64::MAX, |len| len - info.offset);
    if declared.is_some_and(|n| n > remaining) {
        return Err(TusError::BodyTooLong);
    }

    let mut reader = StreamReader::new(body.into_data_stream().map_err(std::io::Error::other));
    let mut bounded = (&mut reader).take(remaining);
    let new_offset = state.store().write(&id, offset, &mut bounded).await?;
    // A chunked body may run past the length: what fitted is stored, the rest is refused.
    if new_offset - offset == remaining && reader.read_u8().await.is_ok() {
        return Err(TusError::BodyTooLong);
    }
    tracing::debug!(upload = %id, from = offset, to = new_offset, "bytes stored");

    let mut out = HeaderMap::new();
    let (name, value) = tus_resumable();
    out.insert(name, value);
    out.insert(UPLOAD_OFFSET, header_u64(new_offset));
    Ok((StatusCode::NO_CONTENT, out))
}
