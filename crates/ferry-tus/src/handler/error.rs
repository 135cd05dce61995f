//! How errors become answers. A tus request's error is its status and stable message from the
//! protocol's table with `Tus-Resumable`; a draft request's error is the same table without it,
//! or one of the draft's RFC 9457 problem documents. Causes from the store and the lock are
//! logged here and answered generically.

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
        let mut response = (self.status_code(), format!("{self}\n")).into_response();
        let headers = response.headers_mut();
        headers.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
        if matches!(self, Self::TooManyUploads | Self::LockUnavailable) {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if matches!(self, Self::UnsupportedVersion) {
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

/// An error answered to an IETF draft request.
#[derive(Debug)]
pub(super) enum DraftError {
    /// A tus error, answered with its status and message.
    Tus(TusError),
    /// An RFC 9457 problem document of a type the draft defines.
    Problem {
        status: StatusCode,
        kind: &'static str,
        title: &'static str,
        offsets: Option<(u64, u64)>,
    },
    /// The append's body is not `application/partial-upload`.
    UnsupportedMediaType,
}

impl DraftError {
    /// The append's offset is not the upload's (409).
    pub(super) fn mismatch(expected: u64, provided: u64) -> Self {
        Self::Problem {
            status: StatusCode::CONFLICT,
            kind: MISMATCHING_UPLOAD_OFFSET,
            title: "Upload-Offset does not match the upload's offset",
            offsets: Some((expected, provided)),
        }
    }

    /// An append to a complete upload (400).
    pub(super) fn completed() -> Self {
        Self::Problem {
            status: StatusCode::BAD_REQUEST,
            kind: COMPLETED_UPLOAD,
            title: "the upload is already complete",
            offsets: None,
        }
    }

    /// Lengths that contradict each other (400).
    pub(super) fn inconsistent() -> Self {
        Self::Problem {
            status: StatusCode::BAD_REQUEST,
            kind: INCONSISTENT_UPLOAD_LENGTH,
            title: "the request's length conflicts with the upload's length",
            offsets: None,
        }
    }
}

impl From<TusError> for DraftError {
    fn from(e: TusError) -> Self {
        match e {
            TusError::OffsetMismatch { sent, current } => Self::mismatch(current, sent),
            e => Self::Tus(e),
        }
    }
}

impl From<StoreError> for DraftError {
    fn from(e: StoreError) -> Self {
        TusError::from(e).into()
    }
}

impl IntoResponse for DraftError {
    fn into_response(self) -> Response {
        let mut response = match self {
            Self::Tus(e) => {
                let mut r = e.into_response();
                r.headers_mut().remove(TUS_RESUMABLE);
                r
            }
            Self::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/partial-upload\n",
            )
                .into_response(),
            Self::Problem {
                status,
                kind,
                title,
                offsets,
            } => {
                let mut doc = serde_json::json!({ "type": kind, "title": title });
                if let Some((expected, provided)) = offsets {
                    doc["expected-offset"] = expected.into();
                    doc["provided-offset"] = provided.into();
                }
                let problem = HeaderValue::from_static("application/problem+json");
                (status, [(header::CONTENT_TYPE, problem)], doc.to_string()).into_response()
            }
        };
        insert_interop(response.headers_mut());
        response
    }
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
