//! The one error type of the companion's routes: a stable status and a `{ "message" }` JSON body
//! as Companion sends; internal causes are logged, never echoed.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The body of every error answer: `{"message": ...}`, as Companion sends.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ErrorMessage {
    /// What went wrong, safe to show to a person.
    pub message: String,
}

/// The body of a 429 for a provider's rate limit (with a `Retry-After` header of the same
/// seconds): a client shows a wait and may retry then.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitedMessage {
    /// `<Provider name> is limiting requests; retrying in N s`.
    pub message: String,
    /// N: seconds until the provider can be asked again.
    pub retry_after: u64,
}

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
    /// On provider routes, no valid Uppy auth token (missing, forged, expired, another
    /// provider's).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The token is valid, but what it names was not created under its subject.
    #[error("this upload belongs to someone else")]
    NotOwner,
    /// The object store refused the request about the client's input (unknown upload, bad
    /// part...) or reported a failure in its answer; its words are safe to show.
    #[error("{message}")]
    Store { status: StatusCode, message: String },
    /// The object store could not be reached or answered something unusable.
    #[error("the storage service failed")]
    Upstream(String),
    /// The server configuration is invalid (startup only).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A bug or an unexpected local failure.
    #[error("internal error")]
    Internal(String),
    /// A service the fleet shares (Redis) cannot be reached now; the message is safe to show.
    #[error("{0}")]
    Unavailable(String),
    /// The provider refused the access token (expired or revoked): the client refreshes.
    #[error("HTTP 401: invalid access token detected by Provider")]
    ProviderUnauthorized,
    /// An unknown route parameter (a provider that is not enabled).
    #[error("{0}")]
    NotFound(String),
    /// A websocket from a browser origin that is not allowed.
    #[error("Origin not allowed")]
    OriginNotAllowed,
    /// A client holds too many of something at once (auth sockets); the message says what.
    #[error("{0}")]
    TooMany(String),
    /// A provider answered this status; the message is safe to show.
    #[error("{message}")]
    Provider { status: u16, message: String },
    /// A provider limits requests for `retry_after` more seconds: a 429 with `Retry-After`
    /// and `retryAfter` in the body, so a client shows a wait, not a failure.
    #[error("{message}")]
    RateLimited { message: String, retry_after: u64 },
    /// Refused by access control (`--auth-secret`): token, limits or quota.
    #[error(transparent)]
    Auth(#[from] ferry_auth::AuthError),
}

impl CompanionError {
    /// The HTTP status of this error, following Companion's conventions.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::Forbidden(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::NotOwner => StatusCode::FORBIDDEN,
            Self::Store { status, .. } => *status,
            Self::Upstream(_) => StatusCode::BAD_GATEWAY,
            Self::SourceStatus(429) => StatusCode::TOO_MANY_REQUESTS,
            Self::SourceStatus(s) if (400..500).contains(s) => StatusCode::FAILED_DEPENDENCY,
            Self::SourceStatus(_) | Self::Unreachable(_) => StatusCode::BAD_GATEWAY,
            Self::Config(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::ProviderUnauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::OriginNotAllowed => StatusCode::FORBIDDEN,
            Self::TooMany(_) | Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Provider { status, .. } => provider_status(*status),
            Self::Auth(e) => e.status_code(),
        }
    }
}

impl CompanionError {
    /// A [`CompanionError::BadRequest`] with `message`.
    pub fn bad(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }
}

impl From<ferry_s3::S3Error> for CompanionError {
    fn from(e: ferry_s3::S3Error) -> Self {
        use ferry_s3::S3Error;
        match e {
            S3Error::Client { status, message } => Self::Store {
                status: StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
                message,
            },
            S3Error::Failed(message) => Self::Store {
                status: StatusCode::BAD_GATEWAY,
                message,
            },
            S3Error::Upstream(cause) => Self::Upstream(cause),
            S3Error::Config(message) => Self::Config(message),
        }
    }
}

/// Companion's mapping of a provider's answer: 429 stays, other 4xx are 424, the rest 502.
fn provider_status(status: u16) -> StatusCode {
    match status {
        400 => StatusCode::BAD_REQUEST,
        429 => StatusCode::TOO_MANY_REQUESTS,
        503 => StatusCode::SERVICE_UNAVAILABLE,
        s if (400..500).contains(&s) => StatusCode::FAILED_DEPENDENCY,
        _ => StatusCode::BAD_GATEWAY,
    }
}

impl IntoResponse for CompanionError {
    fn into_response(self) -> Response {
        match &self {
            Self::Unreachable(cause) => tracing::info!(%cause, "source unreachable"),
            Self::Upstream(cause) => tracing::error!(%cause, "S3 request failed"),
            Self::Internal(cause) | Self::Config(cause) => {
                tracing::error!(%cause, "companion error")
            }
            Self::Auth(e) => return e.clone().into_response(),
            Self::RateLimited {
                message,
                retry_after,
            } => {
                let body = RateLimitedMessage {
                    message: message.clone(),
                    retry_after: *retry_after,
                };
                return (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, retry_after.to_string())],
                    Json(body),
                )
                    .into_response();
            }
            _ => {}
        }
        let body = ErrorMessage {
            message: self.to_string(),
        };
        (self.status_code(), Json(body)).into_response()
    }
}
