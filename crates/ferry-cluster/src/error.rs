//! The crate's one error type. It knows no HTTP: each adapter maps it to its seam's error (the
//! upload lock to ferry-tus's `LockError::Unavailable`, a 503 tus clients retry; the transfer
//! registry to the companion's `Unavailable`). [`ClusterError::is_unavailable`] tells an outage
//! (retry later) from the rest. Messages never carry the Redis URL's credentials or Redis' own
//! error text.

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
    /// True when the error means "Redis is not there right now" (503, retry later).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Unreachable { .. })
    }
}

/// This crate's result type.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outages_are_told_apart_and_their_message_hides_redis_internals() {
        let outage = ClusterError::Unavailable(redis::RedisError::from((
            redis::ErrorKind::Io,
            "connection refused by 10.0.0.7",
        )));
        assert!(outage.is_unavailable());
        assert_eq!(
            outage.to_string(),
            "the coordination store (Redis) is unavailable; try again shortly"
        );
        let busy = ClusterError::LockBusy;
        assert!(!busy.is_unavailable());
        assert_eq!(
            busy.to_string(),
            "the upload is busy with another request; try again shortly"
        );
        let unreachable = ClusterError::Unreachable {
            url: "redis://:***@10.0.0.7/".to_owned(),
            reason: "refused".to_owned(),
        };
        assert!(unreachable.is_unavailable());
        assert!(!ClusterError::LeaseLost.is_unavailable());
    }
}
