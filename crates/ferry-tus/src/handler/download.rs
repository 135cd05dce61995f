//! GET: downloads a finished upload. Always as an attachment with `nosniff`, so stored bytes can
//! never run as a page of this origin.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tokio_util::io::ReaderStream;

use super::{TusState, header_u64, parse_id};
use crate::protocol::TusError;

pub(super) async fn handle(
    State(state): State<TusState>,
    Path(id): Path<String>,
) -> Result<Response, TusError> {
    let id = parse_id(&id)?;
    let info = state.store().info(&id).await?;
    if !info.is_complete() {
        return Err(TusError::NotFound);
    }
    let reader = state.store().read(&id).await?;
    let mut response = Body::from_stream(ReaderStream::new(reader)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, header_u64(info.offset));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}
