//! How errors become answers. A tus request's error is its status and stable message from the
//! protocol's table with `Tus-Resumable`; a draft request's error is the same table without it,
//! or one of the draft's RFC 9457 problem documents. Causes from the store and the lock are
//! logged here and answered by what they are: a full disk is 507, an unreachable or failing
//! storage service 503 with `Retry-After` (clients retry), anything else a generic 500.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::lock::LockError;
use crate::protocol::headers::{TUS_RESUMABLE, TUS_VERSION as TUS_VERSION_HEADER};
use crate::protocol::ietf::{
    COMPLETED_UPLOAD, INCONSISTENT_UPLOAD_LENGTH, INTEROP_VERSION, MISMATCHING_UPLOAD_OFFSET,
    UPLOAD_DRAFT_INTEROP_VERSION,
};
use crate::protocol::{TUS_VERSION, TusError};
use crate::store::StoreError;

impl IntoResponse for TusError {
    fn into_response(self) -> Response {
        let retry = matches!(
            self,
            Self::TooManyUploads | Self::LockUnavailable | Self::StorageUnavailable
        );
        let version = matches!(self, Self::UnsupportedVersion);
        let mut response = match self {
            Self::Refused(answer) => answer.map(Body::from),
            other => (other.status_code(), format!("{other}\n")).into_response(),
        };
        let headers = response.headers_mut();
        headers.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
        if retry {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if version {
            headers.insert(TUS_VERSION_HEADER, HeaderValue::from_static(TUS_VERSION));
        }
        response
    }
}

impl From<StoreError> for TusError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Self::NotFound,
            StoreError::OffsetMismatch { sent, current } => Self::OffsetMismatch { sent, current },
            StoreError::AlreadyExists => Self::IdTaken,
            e if e.is_no_space() => {
                tracing::warn!(error = %e, "tus store: no space left");
                Self::NoSpace
            }
            StoreError::Unavailable(cause) => {
                tracing::warn!(%cause, "tus store: storage service unavailable");
                Self::StorageUnavailable
            }
            StoreError::Io(e) => {
                tracing::error!(error = %e, "tus store failure");
                Self::Internal
            }
        }
    }
}

impl From<LockError> for TusError {
    fn from(e: LockError) -> Self {
        tracing::error!(error = %e, "upload lock failure");
        Self::LockUnavailable
    }
}

/// An error answered to an IETF draft request: a tus error, or a problem document (RFC 9457) of
/// a type the draft defines.
#[derive(Debug)]
pub(super) enum DraftError {
    Tus(TusError),
    /// The append's offset is not the upload's (409).
    Mismatch {
        expected: u64,
        provided: u64,
    },
    /// An append to a complete upload (400).
    Completed,
    /// Lengths that contradict each other (400).
    Inconsistent,
    /// The append's body is not `application/partial-upload` (415).
    UnsupportedMediaType,
}

impl<E: Into<TusError>> From<E> for DraftError {
    fn from(e: E) -> Self {
        match e.into() {
            TusError::OffsetMismatch { sent, current } => Self::Mismatch {
                expected: current,
                provided: sent,
            },
            e => Self::Tus(e),
        }
    }
}

impl IntoResponse for DraftError {
    fn into_response(self) -> Response {
        let (status, kind, title) = match self {
            Self::Mismatch { .. } => (
                StatusCode::CONFLICT,
                MISMATCHING_UPLOAD_OFFSET,
                "Upload-Offset does not match the upload's offset",
            ),
            Self::Completed => (
                StatusCode::BAD_REQUEST,
                COMPLETED_UPLOAD,
                "the upload is already complete",
            ),
            Self::Inconsistent => (
                StatusCode::BAD_REQUEST,
                INCONSISTENT_UPLOAD_LENGTH,
                "the request's length conflicts with the upload's length",
            ),
            Self::Tus(e) => {
                let mut response = e.into_response();
                response.headers_mut().remove(TUS_RESUMABLE);
                return with_interop(response);
            }
            Self::UnsupportedMediaType => {
                let message = "Content-Type must be application/partial-upload\n";
                return with_interop((StatusCode::UNSUPPORTED_MEDIA_TYPE, message).into_response());
            }
        };
        let mut doc = serde_json::json!({ "type": kind, "title": title });
        if let Self::Mismatch { expected, provided } = self {
            doc["expected-offset"] = expected.into();
            doc["provided-offset"] = provided.into();
        }
        let problem = HeaderValue::from_static("application/problem+json");
        let response = (status, [(header::CONTENT_TYPE, problem)], doc.to_string());
        with_interop(response.into_response())
    }
}

fn with_interop(mut response: Response) -> Response {
    insert_interop(response.headers_mut());
    response
}

/// `Upload-Draft-Interop-Version`, on every answer to a draft request.
pub(super) fn insert_interop(out: &mut HeaderMap) {
    out.insert(
        UPLOAD_DRAFT_INTEROP_VERSION,
        HeaderValue::from_static(INTEROP_VERSION),
    );
}

/// HEAD answers carry no body, errors included.
pub(super) fn without_body(mut response: Response) -> Response {
    *response.body_mut() = Body::empty();
    response
}
