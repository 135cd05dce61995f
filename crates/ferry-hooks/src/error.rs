//! The crate's one error type. A blocking hook that fails is answered to the client with
//! [`HookError::status_code`] and the error's `Display`, which never carries internals (URLs,
//! receiver bodies, exit codes): those are logged by the sender when it fails, and kept in
//! [`HookError::detail`] for the caller's own logs.

use std::time::Duration;

use http::StatusCode;

use crate::kind::HookType;

/// Why a hook could not be sent or its answer not be used.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The receiver could not be reached, answered with a non-2xx status after the retries, or
    /// the hook executable failed.
    #[error("hook receiver unavailable")]
    Unavailable {
        /// The hook that failed.
        hook: HookType,
        /// What went wrong, for logs only.
        detail: String,
    },
    /// The receiver did not answer within the timeout.
    #[error("hook receiver did not answer in time")]
    Timeout {
        /// The hook that timed out.
        hook: HookType,
        /// The timeout that passed.
        after: Duration,
    },
    /// The receiver answered, but not with a usable hook response (not JSON, too large, an
    /// invalid status, id, header or metadata key).
    #[error("hook receiver sent an invalid response")]
    InvalidResponse {
        /// The hook whose answer was unusable.
        hook: HookType,
        /// What was wrong with it, for logs only.
        detail: String,
    },
    /// The hook settings are unusable; reported at startup, never to a client.
    #[error("invalid hook configuration: {0}")]
    Config(String),
}

impl HookError {
    /// The status a client gets when a blocking hook fails this way: 502 when the receiver
    /// failed or answered nonsense, 504 when it was too slow, 500 for a configuration error.
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::Unavailable { .. } | Self::InvalidResponse { .. } => StatusCode::BAD_GATEWAY,
            Self::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            Self::Config(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The cause behind the public message, for the server's logs.
    pub fn detail(&self) -> String {
        match self {
            Self::Unavailable { hook, detail } | Self::InvalidResponse { hook, detail } => {
                format!("{hook}: {detail}")
            }
            Self::Timeout { hook, after } => format!("{hook}: no answer within {after:?}"),
            Self::Config(detail) => detail.clone(),
        }
    }

    pub(crate) fn invalid(hook: HookType, detail: impl Into<String>) -> Self {
        Self::InvalidResponse {
            hook,
            detail: detail.into(),
        }
    }

    pub(crate) fn unavailable(hook: HookType, detail: impl Into<String>) -> Self {
        Self::Unavailable {
            hook,
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_messages_carry_no_detail() {
        let err = HookError::unavailable(HookType::PreCreate, "connect to 10.1.2.3:9 refused");
        assert_eq!(err.to_string(), "hook receiver unavailable");
        assert_eq!(err.status_code(), StatusCode::BAD_GATEWAY);
        assert_eq!(err.detail(), "pre-create: connect to 10.1.2.3:9 refused");
        let err = HookError::Timeout {
            hook: HookType::PreFinish,
            after: Duration::from_secs(15),
        };
        assert_eq!(err.to_string(), "hook receiver did not answer in time");
        assert_eq!(err.status_code(), StatusCode::GATEWAY_TIMEOUT);
        let err = HookError::invalid(HookType::PreCreate, "body is not JSON: <html>");
        assert_eq!(err.to_string(), "hook receiver sent an invalid response");
        assert!(!err.to_string().contains("html"));
    }
}
