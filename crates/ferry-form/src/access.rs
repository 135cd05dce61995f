//! Access control on the form endpoint, when the server runs with `--auth-secret`: the gate in
//! front has checked the token and left its [`Principal`] in the request. Files are checked
//! against the token's limits (their bodies are charged to the subject's quota as they are read,
//! see `body`), stored as the subject's, and only that subject can fetch them back.

use axum::http::Extensions;
use ferry_auth::{Admission, Principal};

use crate::FormError;

/// The request's principal, if access control is on.
pub(crate) fn principal(extensions: &Extensions) -> Option<&Principal> {
    extensions.get::<Principal>()
}

/// Checks one file's type against the token and returns the size cap that applies to it: the
/// server's and the token's, whichever is smaller.
pub(crate) fn admit_file(
    principal: Option<&Principal>,
    name: &str,
    content_type: &str,
    server_max: Option<u64>,
) -> Result<Option<u64>, FormError> {
    let Some(principal) = principal else {
        return Ok(server_max);
    };
    principal.check_file(&Admission {
        size: None,
        mime: Some(content_type),
        name: Some(name),
    })?;
    Ok(match (server_max, principal.max_size()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// Whether the request may fetch a file stored for `owner`.
pub(crate) fn may_read(principal: Option<&Principal>, owner: Option<&str>) -> bool {
    principal.is_none_or(|p| p.owns(owner))
}
