//! The s3 store's side of [`ferry_s3`]: its errors as [`StoreError`]s (the handler logs them and
//! answers 500; a missing object is [`StoreError::NotFound`]).

use ferry_s3::S3Error;

use crate::store::StoreError;

impl From<S3Error> for StoreError {
    fn from(e: S3Error) -> Self {
        if e.is_not_found() {
            StoreError::NotFound
        } else {
            s3_error("s3", e.detail())
        }
    }
}

/// A failure of the store's own bookkeeping on S3, as a store error.
pub(super) fn s3_error(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Io(std::io::Error::other(format!("s3 {what}: {detail}")))
}
