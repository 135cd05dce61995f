//! HEAD: the upload's durable offset, length, metadata and concatenation state. Never has a
//! body. A final upload still waiting for parts (`concatenation-unfinished`) has no
//! `Upload-Offset`, and `Upload-Length` only once every part's length is known; one whose parts
//! have all finished is concatenated first (this completes a final left pending by a restart).
//! Taking the upload's lock ends a PATCH still in flight, so the answer is prompt and reports
//! exactly what that PATCH stored.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::without_body;
use super::path_id::Id;
use super::pending::{finish_if_ready, pending_length};
use super::state::TusState;
use super::wire::{header_u64, require_version, tus_headers};
use crate::id::UploadId;
use crate::protocol::TusError;
use crate::protocol::headers::{
    UPLOAD_CONCAT, UPLOAD_DEFER_LENGTH, UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET,
};
use crate::store::{Concat, UploadInfo};

#[utoipa::path(
    head,
    path = "/files/{id}",
    operation_id = "tus_offset",
    tag = "tus",
    description = "The upload's offset, length and metadata. Never has a body.",
    params(
        ("id" = String, Path, description = "The upload's id."),
        ("Tus-Resumable" = String, Header, description = "The protocol version: `1.0.0`."),
    ),
    responses(
        (status = 200, description = "The upload's state.", headers(
            ("Upload-Offset" = u64),
            ("Upload-Length" = u64),
            ("Upload-Defer-Length" = u8),
            ("Upload-Metadata" = String),
            ("Upload-Concat" = String),
            ("Upload-Expires" = String),
            ("Cache-Control" = String, description = "`no-store`."),
            ("Tus-Resumable" = String),
        )),
        (status = 404, description = "No such upload."),
        (status = 410, description = "The upload expired."),
        (status = 412, description = "An unsupported tus version."),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(
    State(state): State<TusState>,
    Id(id): Id,
    headers: HeaderMap,
) -> Response {
    match info_headers(&state, &id, &headers).await {
        Ok(h) => (StatusCode::OK, h).into_response(),
        Err(e) => without_body(e.into_response()),
    }
}

async fn info_headers(
    state: &TusState,
    id: &UploadId,
    headers: &HeaderMap,
) -> Result<HeaderMap, TusError> {
    require_version(headers)?;
    let _lease = state.lock().acquire(id).await?;
    let info = state.store().info(id).await?;
    state.check_not_expired(&info)?;
    let info = finish_if_ready(state, info).await?;
    let mut out = tus_headers();
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if info.pending {
        if let Some(length) = pending_length(state, &info).await? {
            out.insert(UPLOAD_LENGTH, header_u64(length));
        }
    } else {
        out.insert(UPLOAD_OFFSET, header_u64(info.offset));
        match info.length {
            Some(length) => out.insert(UPLOAD_LENGTH, header_u64(length)),
            None => out.insert(UPLOAD_DEFER_LENGTH, HeaderValue::from_static("1")),
        };
    }
    if !info.metadata.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&info.metadata.render()) {
            out.insert(UPLOAD_METADATA, v);
        }
    }
    if let Some(v) = concat_header(state, &info) {
        out.insert(UPLOAD_CONCAT, v);
    }
    state.insert_expires(&info, &mut out);
    Ok(out)
}

/// `partial`, or `final;` and the part urls, rebuilt from stored ids (never from client text).
fn concat_header(state: &TusState, info: &UploadInfo) -> Option<HeaderValue> {
    let text = match info.concat.as_ref()? {
        Concat::Partial => "partial".to_owned(),
        Concat::Final(parts) => {
            let urls: Vec<String> = parts.iter().map(|p| state.location(p)).collect();
            format!("final;{}", urls.join(" "))
        }
    };
    HeaderValue::from_str(&text).ok()
}
