//! The one error type of the S3 layer. Callers map it onto their own: the tus store onto
//! `StoreError`, the companion onto its JSON answers.

/// Why an S3 call failed.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// The store answered 4xx about the request (unknown key or upload, bad part...). The
    /// store's own words are kept: they concern the caller's input and are safe to show.
    #[error("{message}")]
    Client { status: u16, message: String },
    /// The store accepted the request but reported a failure in its answer
    /// (CompleteMultipartUpload's "200 carrying `<Error>`"); the store's own message.
    #[error("{0}")]
    Failed(String),
    /// The store could not be reached, did not answer in time, refused our credentials,
    /// failed, or answered something unusable. The cause is for logs only.
    #[error("the storage service failed")]
    Upstream(String),
    /// The settings cannot describe a bucket (bad endpoint URL or bucket name).
    #[error("invalid S3 settings: {0}")]
    Config(String),
}

impl S3Error {
    /// The store said the key or upload does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Client { status: 404, .. })
    }

    /// What happened, causes included: for logs, never for clients.
    pub fn detail(&self) -> String {
        match self {
            Self::Upstream(cause) => cause.clone(),
            other => other.to_string(),
        }
    }

    pub(crate) fn upstream(what: &str, detail: impl std::fmt::Display) -> Self {
        Self::Upstream(format!("{what}: {detail}"))
    }

    /// A call that made no progress for `idle` (see [`crate::timeouts`]).
    pub(crate) fn timed_out(what: &str, idle: std::time::Duration) -> Self {
        Self::Upstream(format!("{what}: no progress for {idle:?}"))
    }
}
