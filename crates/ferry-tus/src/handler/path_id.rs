//! The upload a request on `{base}{id}` names, as an extractor. The id is taken from the
//! decoded path segment and parsed once per request: the owner check in [`super::access`]
//! extracts it first and leaves it in the request, and the verb's handler extracts the very
//! same value, so the upload that was checked is the upload that is used (`/files/%61bc` and
//! `/files/abc` are one upload to both). A segment that is not an id is 404 before any store
//! is asked.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::id::UploadId;
use crate::protocol::TusError;

/// The id of the upload the request is about.
#[derive(Clone, Debug)]
pub(super) struct Id(pub(super) UploadId);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = TusError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, TusError> {
        if let Some(id) = parts.extensions.get::<Self>() {
            return Ok(id.clone());
        }
        // A segment that does not even decode (`%FF`) names no upload either.
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|_| TusError::NotFound)?;
        let id = Self(UploadId::parse(&raw).ok_or(TusError::NotFound)?);
        parts.extensions.insert(id.clone());
        Ok(id)
    }
}
