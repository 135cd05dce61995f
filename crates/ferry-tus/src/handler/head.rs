//! HEAD: the upload's durable offset, length and metadata. Never has a body.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{TusState, header_u64, parse_id, require_version, tus_resumable};
use crate::protocol::TusError;
use crate::protocol::headers::{UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET};

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match info_headers(&state, &id, &headers).await {
        Ok(h) => (StatusCode::OK, h).into_response(),
        // HEAD answers carry no body, errors included.
        Err(e) => {
            let mut response = e.into_response();
            *response.body_mut() = axum::body::Body::empty();
            response
        }
    }
}

async fn info_headers(
    state: &TusState,
    raw_id: &str,
    headers: &HeaderMap,
) -> Result<HeaderMap, TusError> {
    require_version(headers)?;
    let id = parse_id(raw_id)?;
    let info = state.store().info(&id).await?;
    let mut out = HeaderMap::new();
    let (name, value) = tus_resumable();
    out.insert(name, value);
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    out.insert(UPLOAD_OFFSET, header_u64(info.offset));
    if let Some(length) = info.length {
        out.insert(UPLOAD_LENGTH, header_u64(length));
    }
    if !info.metadata.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&info.metadata.render()) {
            out.insert(UPLOAD_METADATA, v);
        }
    }
    Ok(out)
}
