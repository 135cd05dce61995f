//! OPTIONS: what this server supports. `Tus-Resumable` is ignored on this request.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};

use super::{TusState, header_u64, tus_headers};
use crate::protocol::TUS_VERSION;
use crate::protocol::checksum::ALGORITHMS;
use crate::protocol::headers::{
    TUS_CHECKSUM_ALGORITHM, TUS_EXTENSION, TUS_MAX_SIZE, TUS_VERSION as TUS_VERSION_HEADER,
};

pub(super) async fn handle(State(state): State<TusState>) -> (StatusCode, HeaderMap) {
    let mut headers = tus_headers();
    headers.insert(TUS_VERSION_HEADER, HeaderValue::from_static(TUS_VERSION));
    if let Ok(v) = HeaderValue::from_str(&state.extensions()) {
        headers.insert(TUS_EXTENSION, v);
    }
    if let Some(max) = state.config().max_size {
        headers.insert(TUS_MAX_SIZE, header_u64(max));
    }
    if state.store().as_stage().is_some() {
        headers.insert(TUS_CHECKSUM_ALGORITHM, HeaderValue::from_static(ALGORITHMS));
    }
    (StatusCode::NO_CONTENT, headers)
}
