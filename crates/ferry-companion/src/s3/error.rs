//! The S3 routes' error type: one status per variant, answered as JSON `{ "message" }` the way
//! Companion does. Causes from the store are logged, never echoed.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why an S3 route refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// Bad input from the client; the message says what was wrong.
    #[error("{0}")]
    BadRequest(String),
    /// No bearer token, or one that is malformed, forged or expired.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The token is valid, but the key was not created under its subject.
    #[error("this upload belongs to someone else")]
    Forbidden,
    /// The store refused the request with a client error (e.g. unknown upload id).
    #[error("{message}")]
    Store { status: StatusCode, message: String },
    /// The store could not be reached or answered something unusable.
    #[error("the storage service failed")]
    Upstream(String),
}

impl S3Error {
    /// The HTTP status answered for this error.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::Store { status, .. } => *status,
            Self::Upstream(_) => StatusCode::BAD_GATEWAY,
        }
    }

    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }
}

impl IntoResponse for S3Error {
    fn into_response(self) -> Response {
        if let Self::Upstream(cause) = &self {
            tracing::error!(%cause, "S3 request failed");
        }
        let status = self.status_code();
        (status, Json(json!({ "message": self.to_string() }))).into_response()
    }
}
