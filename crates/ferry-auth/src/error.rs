//! Every refusal of the access-control layer, with its status and the message the person sees.
//! Messages never echo the token or the secret.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Why a request or an upload was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer` header and no `access_token` parameter.
    #[error("a bearer token is required")]
    Missing,
    /// Malformed, forged, signed with another algorithm, or without a subject.
    #[error("invalid token")]
    Invalid,
    /// Past its `exp`.
    #[error("token expired")]
    Expired,
    /// Larger than the token's `max_size`.
    #[error("File too large: this upload may be at most {limit} bytes")]
    TooLarge { limit: u64 },
    /// Not one of the token's `types`.
    #[error("File type not allowed: accepted types are {accepted}")]
    TypeNotAllowed { accepted: String },
    /// A storage or object key outside the token's `prefix`.
    #[error("this token may only store files under {prefix:?}")]
    OutsidePrefix { prefix: String },
    /// Larger than the whole quota.
    #[error("File too large for the upload quota of {quota} bytes per {window} seconds")]
    OverQuota { quota: u64, window: u64 },
    /// The quota of the current window is used up; `retry_after` seconds until enough frees.
    #[error(
        "Upload quota exceeded: {used} of {quota} bytes used in the last {window} seconds; try again in {retry_after} seconds"
    )]
    QuotaExhausted {
        used: u64,
        quota: u64,
        window: u64,
        retry_after: u64,
    },
}

impl AuthError {
    /// The HTTP status this refusal is answered with.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::Missing | Self::Invalid | Self::Expired => StatusCode::UNAUTHORIZED,
            Self::TooLarge { .. } | Self::OverQuota { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TypeNotAllowed { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::OutsidePrefix { .. } => StatusCode::FORBIDDEN,
            Self::QuotaExhausted { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// Headers that belong with the status: the auth scheme with 401, the wait with 429.
    pub fn headers(&self) -> Vec<(header::HeaderName, HeaderValue)> {
        match self {
            Self::Missing => vec![(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))],
            Self::Invalid | Self::Expired => vec![(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            )],
            Self::QuotaExhausted { retry_after, .. } => {
                vec![(header::RETRY_AFTER, HeaderValue::from(*retry_after))]
            }
            _ => Vec::new(),
        }
    }
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status_code(),
            Json(serde_json::json!({ "message": self.to_string() })),
        )
            .into_response();
        response.headers_mut().extend(self.headers());
        response
    }
}
