//! Errors of the form endpoint: one enum, one status mapping, one JSON body. Internal causes
//! are logged and never echoed to the client; a full disk is said as such (507).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Everything a request to the endpoint can fail with.
#[derive(Debug, thiserror::Error)]
pub enum FormError {
    /// The request is malformed (no file, bad multipart, bad name...).
    #[error("{0}")]
    BadRequest(String),
    /// A file is larger than the configured maximum.
    #[error("File exceeds the maximum size of {max} bytes")]
    TooLarge {
        /// The configured maximum, in bytes.
        max: u64,
    },
    /// The body delivered less than 1 KiB in one idle window (`--idle-timeout`).
    #[error("the request body was idle for too long")]
    IdleTimeout,
    /// No stored file has this id.
    #[error("No such file")]
    NotFound,
    /// Disk trouble; logged, answered as a generic 500.
    #[error("internal error")]
    Io(std::io::Error),
    /// The disk is full (ENOSPC or the disk quota): 507, and nothing of the file is kept.
    #[error("No space left on the server to store the file")]
    NoSpace,
    /// A pre-create hook could not be asked (receiver down or too slow): its status (502, 504)
    /// and public message.
    #[error("{message}")]
    Hook {
        /// 502 or 504.
        status: StatusCode,
        /// The hook error's public message.
        message: String,
    },
    /// Refused by access control (`--auth-secret`): the token's limits or the quota.
    #[error(transparent)]
    Auth(#[from] ferry_auth::AuthError),
    /// A pre-create hook refused the file: the answer it chose, sent as it is.
    #[error("refused by the application's hook")]
    Refused(Box<axum::http::Response<String>>),
}

impl From<std::io::Error> for FormError {
    fn from(e: std::io::Error) -> Self {
        use std::io::ErrorKind::{QuotaExceeded, StorageFull};
        if matches!(e.kind(), StorageFull | QuotaExceeded) {
            tracing::warn!(error = %e, "form upload: no space left");
            Self::NoSpace
        } else {
            Self::Io(e)
        }
    }
}

impl FormError {
    /// The HTTP status answered for this error.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::IdleTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::NoSpace => StatusCode::INSUFFICIENT_STORAGE,
            Self::Hook { status, .. } => *status,
            Self::Refused(answer) => answer.status(),
            Self::Auth(e) => e.status_code(),
        }
    }
}

impl IntoResponse for FormError {
    fn into_response(self) -> Response {
        if let Self::Io(cause) = &self {
            tracing::error!(error = %cause, "form upload failed");
        }
        match self {
            Self::Refused(answer) => return answer.map(axum::body::Body::from),
            Self::Auth(e) => return e.into_response(),
            _ => {}
        }
        let body = crate::answer::ErrorMessage {
            message: self.to_string(),
        };
        (self.status_code(), Json(body)).into_response()
    }
}
