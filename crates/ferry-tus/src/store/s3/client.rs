//! The s3 store's side of [`ferry_s3`]: its errors as [`StoreError`]s. A missing object is
//! [`StoreError::NotFound`]; a store that cannot be reached, does not answer in time or fails
//! is [`StoreError::Unavailable`] (the client may retry: what was recorded before stands);
//! the store refusing our request otherwise is an internal failure.

use ferry_s3::S3Error;

use crate::store::StoreError;

impl From<S3Error> for StoreError {
    fn from(e: S3Error) -> Self {
        match e {
            e if e.is_not_found() => StoreError::NotFound,
            S3Error::Upstream(_) | S3Error::Failed(_) => StoreError::Unavailable(e.detail()),
            e => s3_error("s3", e.detail()),
        }
    }
}

/// A failure of the store's own bookkeeping on S3, as a store error.
pub(super) fn s3_error(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Io(std::io::Error::other(format!("s3 {what}: {detail}")))
}
