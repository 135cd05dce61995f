//! GET: downloads a finished upload. The stored media type is sent only when it is on a short
//! allowlist of types browsers render inertly; anything else (HTML, SVG, scripts, unknown) is
//! `application/octet-stream` as an attachment, so stored bytes never run as a page of this
//! origin. `nosniff` always.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tokio_util::io::ReaderStream;

use super::path_id::Id;
use super::state::TusState;
use super::wire::header_u64;
use crate::protocol::{Metadata, TusError};

/// Types served as themselves. No SVG (it runs scripts), no HTML or XML.
const SAFE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "video/mp4",
    "video/webm",
    "video/ogg",
    "audio/mpeg",
    "audio/ogg",
    "audio/wav",
    "audio/webm",
    "application/pdf",
    "text/plain",
];

#[utoipa::path(
    get,
    path = "/files/{id}",
    operation_id = "tus_download",
    tag = "tus",
    description = "Downloads a finished upload. Only inert media types keep their type; anything \
        else is an `application/octet-stream` attachment.",
    params(("id" = String, Path, description = "The upload's id.")),
    responses(
        (status = 200, description = "The upload's bytes.", content_type = "application/octet-stream", headers(
            ("Content-Length" = u64),
            ("Content-Disposition" = String),
        )),
        (status = 404, description = "No such upload, or not finished.", body = String, content_type = "text/plain"),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(
    State(state): State<TusState>,
    Id(id): Id,
) -> Result<Response, TusError> {
    let info = state.store().info(&id).await?;
    if !info.is_complete() {
        return Err(TusError::NotFound);
    }
    let reader = state.store().read(&id).await?;
    let mut response = Body::from_stream(ReaderStream::new(reader)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, header_u64(info.offset));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    match safe_type(&info.metadata) {
        Some(kind) => {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        }
        None => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            headers.insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment"),
            );
        }
    }
    Ok(response)
}

/// The allowlisted type named by the `filetype` (or `type`) metadata, parameters dropped.
/// Returns our own static string, so no client text reaches the header.
pub(super) fn safe_type(metadata: &Metadata) -> Option<&'static str> {
    let raw = metadata
        .text("filetype")
        .or_else(|| metadata.text("type"))?;
    let essence = raw.split(';').next()?.trim().to_ascii_lowercase();
    SAFE_TYPES.iter().copied().find(|t| *t == essence)
}
