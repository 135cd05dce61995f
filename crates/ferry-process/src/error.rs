//! The crate's one error type: an Assembly API refusal, answered as Transloadit does, a JSON
//! `{ "error": CODE, "message": ..., "http_code": N }` with a 4xx or 5xx status. Codes are taken
//! from Transloadit's documented list (its SDK's schema accepts no others).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A refused request or a failed step: a documented error code and a human message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The HTTP status of the answer.
    pub status: StatusCode,
    /// The documented error code (`INVALID_SIGNATURE`, ...).
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
    /// Seconds until a refused request may succeed (rate limits): `info.retryIn` and
    /// `Retry-After`, which the Node SDK and Uppy wait for.
    pub retry_in: Option<u64>,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_in: None,
        }
    }

    /// The same error, to be retried in `secs` seconds.
    pub fn retry_in(mut self, secs: u64) -> Self {
        self.retry_in = Some(secs);
        self
    }

    /// A 400 with `code`.
    pub fn bad(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// A 401 with `code` (missing, wrong or expired credentials).
    pub fn auth(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// `ASSEMBLY_NOT_FOUND`, 404.
    pub fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "ASSEMBLY_NOT_FOUND",
            "The Assembly could not be found.",
        )
    }

    /// A server-side failure (disk, ...): 500, `ASSEMBLY_COULD_NOT_BE_CREATED`-style codes.
    pub fn internal(code: &'static str, err: impl std::fmt::Display) -> Self {
        tracing::error!(code, error = %err, "assembly service failure");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            code,
            "The server could not complete the request.",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({
            "error": self.code,
            "message": self.message,
            "http_code": self.status.as_u16(),
        });
        let Some(secs) = self.retry_in else {
            return (self.status, Json(body)).into_response();
        };
        body["info"] = json!({ "retryIn": secs });
        let retry = [(axum::http::header::RETRY_AFTER, secs.to_string())];
        (self.status, retry, Json(body)).into_response()
    }
}
