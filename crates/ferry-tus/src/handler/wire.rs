//! What every tus answer and request share: the version check and the `Tus-Resumable` header.

use axum::http::{HeaderMap, HeaderValue};

use crate::protocol::headers::TUS_RESUMABLE;
use crate::protocol::{TUS_VERSION, TusError};

/// Rejects requests that do not speak tus 1.0.0 (412).
pub(super) fn require_version(headers: &HeaderMap) -> Result<(), TusError> {
    match headers.get(TUS_RESUMABLE) {
        Some(v) if v == TUS_VERSION => Ok(()),
        _ => Err(TusError::UnsupportedVersion),
    }
}

/// A header map holding `Tus-Resumable`, which every answer but OPTIONS carries.
pub(super) fn tus_headers() -> HeaderMap {
    let mut out = HeaderMap::new();
    out.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    out
}

/// A number as a header value.
pub(super) fn header_u64(n: u64) -> HeaderValue {
    HeaderValue::from(n)
}
