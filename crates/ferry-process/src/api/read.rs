//! Reading and canceling: `GET /assemblies/{id}` answers the Assembly Status (status URLs are
//! capabilities, as Transloadit's: whoever knows the id may read it; the Node SDK's signed query
//! is accepted and not needed), `DELETE` cancels (Uppy sends no body or signature; the SDK's
//! signed body is ignored), and `GET .../files/{file_id}` serves a file's bytes. An Assembly
//! past its retention answers `ASSEMBLY_EXPIRED` ([`crate::upkeep::sweep`]).

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::assembly::status::status as status_json;
use crate::error::ApiError;
use crate::id::Id;
use crate::service::Service;

fn parse(raw: &str) -> Result<Id, ApiError> {
    Id::parse(raw).ok_or_else(ApiError::not_found)
}

/// `GET /assemblies/{id}`.
pub async fn status(
    State(svc): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse(&id)?;
    let a = svc
        .load(&id)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_STATUS_FETCHING_ERROR", e))?
        .ok_or_else(ApiError::not_found)?;
    let a = crate::upkeep::sweep::live(a)?;
    Ok(Json(status_json(&a, &svc.config().urls)))
}

/// `DELETE /assemblies/{id}`.
pub async fn cancel(
    State(svc): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse(&id)?;
    let a = svc
        .cancel(&id)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_STATUS_FETCHING_ERROR", e))?
        .ok_or_else(ApiError::not_found)?;
    let a = crate::upkeep::sweep::live(a)?;
    Ok(Json(status_json(&a, &svc.config().urls)))
}

/// `GET /assemblies/{id}/files/{file_id}`: the bytes, with the detected type. Served so a
/// browser cannot run them as a page of this origin: `nosniff`, a sandboxing CSP, and as an
/// attachment unless an image, video or audio file.
pub async fn file(
    State(svc): State<Service>,
    Path((id, file)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let id = parse(&id)?;
    let file_id = parse(&file)?;
    let a = svc
        .load(&id)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_STATUS_FETCHING_ERROR", e))?
        .ok_or_else(ApiError::not_found)?;
    let f = a.file(&file_id).ok_or_else(ApiError::not_found)?;
    let path = svc
        .0
        .store
        .file_path(&id, &f.path)
        .ok_or_else(ApiError::not_found)?;
    let handle = tokio::fs::File::open(&path)
        .await
        .map_err(|_| ApiError::not_found())?;
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(handle));
    let mut resp = body.into_response();
    let headers = resp.headers_mut();
    let mime = HeaderValue::from_str(&f.mime)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    headers.insert(header::CONTENT_TYPE, mime);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(f.size));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    if !matches!(f.kind.as_deref(), Some("image" | "video" | "audio")) {
        headers.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment"),
        );
    }
    Ok(resp)
}
