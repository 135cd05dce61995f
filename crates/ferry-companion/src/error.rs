//! The one error type of the companion's routes: a stable status and a `{ "message" }` JSON body
//! as Companion sends; internal causes are logged, never echoed.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Everything a companion route can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CompanionError {
    /// The request body or a field in it is malformed or refused.
    #[error("{0}")]
    BadRequest(String),
    /// The URL is not allowed (scheme, local address, allowlist).
    #[error("{0}")]
    Forbidden(String),
    /// The source answered with this HTTP status.
    #[error("the source answered {0}")]
    SourceStatus(u16),
    /// The source could not be reached or broke off.
    #[error("Failed to fetch the file")]
    Unreachable(String),
    /// The server configuration is invalid (startup only).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A bug or an unexpected local failure.
    #[error("internal error")]
    Internal(String),
}

impl CompanionError {
    /// The HTTP status of this error, following Companion's conventions.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::Forbidden(_) => StatusCode::BAD_REQUEST,
            Self::SourceStatus(429) => StatusCode::TOO_MANY_REQUESTS,
            Self::SourceStatus(s) if (400..500).contains(s) => StatusCode::FAILED_DEPENDENCY,
            Self::SourceStatus(_) | Self::Unreachable(_) => StatusCode::BAD_GATEWAY,
            Self::Config(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for CompanionError {
    fn into_response(self) -> Response {
        match &self {
            Self::Unreachable(cause) => tracing::info!(%cause, "source unreachable"),
            Self::Internal(cause) | Self::Config(cause) => {
                tracing::error!(%cause, "companion error")
            }
            _ => {}
        }
        let body = serde_json::json!({ "message": self.to_string() });
        (self.status_code(), Json(body)).into_response()
    }
}
