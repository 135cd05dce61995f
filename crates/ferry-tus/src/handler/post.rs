//! POST (creation): makes a new upload and answers 201 with its `Location`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

use super::{TusState, require_version, tus_resumable};
use crate::protocol::headers::{UPLOAD_LENGTH, UPLOAD_METADATA, parse_u64};
use crate::protocol::{Metadata, TusError};
use crate::store::NewUpload;

pub(super) async fn handle(
    State(state): State<TusState>,
    headers: HeaderMap,
) -> Result<(StatusCode, HeaderMap), TusError> {
    require_version(&headers)?;
    let length = parse_u64(&headers, &UPLOAD_LENGTH)?.ok_or(TusError::MissingLength)?;
    if state.config().max_size.is_some_and(|max| length > max) {
        return Err(TusError::TooLarge);
    }
    let metadata = match headers.get(UPLOAD_METADATA) {
        Some(v) => Metadata::parse(
            v.to_str()
                .map_err(|_| TusError::InvalidMetadata("not ASCII".to_owned()))?,
        )?,
        None => Metadata::default(),
    };
    let info = state
        .store()
        .create(NewUpload {
            length: Some(length),
            metadata,
        })
        .await?;
    tracing::info!(upload = %info.id, length, "upload created");
    let mut out = HeaderMap::new();
    let (name, value) = tus_resumable();
    out.insert(name, value);
    let location =
        HeaderValue::from_str(&state.location(&info.id)).map_err(|_| TusError::Internal)?;
    out.insert(header::LOCATION, location);
    Ok((StatusCode::CREATED, out))
}
