//! The crate's one error type. Callers map it to HTTP with [`ClusterError::status_code`] or
//! answer it directly ([`IntoResponse`]): a Redis outage is a 503 with `Retry-After` (tus-js-client
//! and Uppy retry 5xx), a busy upload a 423, a lost lease a 409 (the work was taken over).
//! Messages never carry the Redis URL's credentials or Redis' own error text.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Everything that can go wrong while coordinating through Redis.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// `--redis-url` does not parse or names an unsupported scheme.
    #[error("invalid Redis URL {url}: {reason}")]
    InvalidUrl {
        /// The URL without its password.
        url: String,
        reason: String,
    },
    /// Redis did not answer when the instance started.
    #[error("Redis at {url} is unreachable: {reason}")]
    Unreachable {
        /// The URL without its password.
        url: String,
        reason: String,
    },
    /// Redis went away (or timed out) during an operation; the caller may retry later.
    #[error("the coordination store (Redis) is unavailable; try again shortly")]
    Unavailable(#[source] redis::RedisError),
    /// Another request kept the lock for longer than the caller was willing to wait.
    #[error("the upload is busy with another request; try again shortly")]
    LockBusy,
    /// A newer request for the same resource arrived while this one was waiting.
    #[error("a newer request for this upload arrived")]
    Superseded,
    /// The caller's lease or transfer ownership is no longer valid (expired, taken over or
    /// handed over); its writes are refused.
    #[error("this instance no longer holds the lease")]
    LeaseLost,
    /// A transfer with this token is already registered.
    #[error("a transfer with this token already exists")]
    AlreadyRegistered,
    /// Redis answered something this crate did not expect (a bug or a foreign key).
    #[error("unexpected answer from Redis: {0}")]
    Protocol(String),
}

impl From<redis::RedisError> for ClusterError {
    fn from(err: redis::RedisError) -> Self {
        Self::Unavailable(err)
    }
}

impl ClusterError {
    /// The HTTP status a route answers this error with.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::Unavailable(_) | Self::Unreachable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::LockBusy | Self::Superseded => StatusCode::LOCKED,
            Self::LeaseLost | Self::AlreadyRegistered => StatusCode::CONFLICT,
            Self::InvalidUrl { .. } | Self::Protocol(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// True when the error means "Redis is not there right now" (503, retry later).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Unreachable { .. })
    }
}

impl IntoResponse for ClusterError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        if status.is_server_error() {
            tracing::warn!(error = ?self, "cluster coordination failed");
        }
        let message = match &self {
            // Internal details stay in the log.
            Self::InvalidUrl { .. } | Self::Protocol(_) => "internal error".to_owned(),
            other => other.to_string(),
        };
        let mut response = (status, message).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::LOCKED {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// This crate's result type.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .expect("body");
        String::from_utf8(bytes.to_vec()).expect("utf-8")
    }

    #[tokio::test]
    async fn outages_answer_503_with_retry_after_and_internals_stay_hidden() {
        let outage = ClusterError::Unavailable(redis::RedisError::from((
            redis::ErrorKind::Io,
            "connection refused by 10.0.0.7",
        )));
        let response = outage.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        assert_eq!(
            body(response).await,
            "the coordination store (Redis) is unavailable; try again shortly"
        );
        let busy = ClusterError::LockBusy.into_response();
        assert_eq!(busy.status(), StatusCode::LOCKED);
        assert_eq!(
            body(busy).await,
            "the upload is busy with another request; try again shortly"
        );
        let odd = ClusterError::Protocol("XAUTOCLAIM reply".into()).into_response();
        assert_eq!(odd.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body(odd).await, "internal error");
        assert_eq!(ClusterError::LeaseLost.status_code(), StatusCode::CONFLICT);
    }
}
