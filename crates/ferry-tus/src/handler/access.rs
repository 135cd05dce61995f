//! Access control inside the endpoint, when the server runs with `--auth-secret`: the gate in
//! front has already checked the token and left its [`Principal`] in the request. Here an
//! upload is admitted under the token's limits and recorded as the subject's, and every request
//! on an existing upload from another subject is answered as if the upload did not exist.

use axum::extract::{Request, State};
use axum::http::{Extensions, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ferry_auth::{Admission, AuthError, Principal};

use super::TusState;
use crate::id::UploadId;
use crate::protocol::TusError;
use crate::store::NewUpload;

/// Admits a new upload for the request's principal (size and type limits, quota) and makes it
/// theirs: owner, and a storage key under the token's prefix. No principal, nothing to do.
pub(super) fn claim(extensions: &Extensions, upload: &mut NewUpload) -> Result<(), TusError> {
    let Some(principal) = extensions.get::<Principal>() else {
        return Ok(());
    };
    // A size limit cannot be held against a length declared later, so it needs one now.
    if upload.length.is_none() && principal.max_size().is_some() {
        return Err(TusError::MissingLength);
    }
    principal.admit(&Admission {
        size: upload.length,
        mime: upload
            .metadata
            .text("filetype")
            .or_else(|| upload.metadata.text("type")),
        name: upload
            .metadata
            .text("filename")
            .or_else(|| upload.metadata.text("name")),
    })?;
    upload.owner = Some(principal.subject().to_owned());
    if let Some(prefix) = principal.prefix() {
        let id = upload.id.get_or_insert_with(UploadId::generate);
        upload.storage_key = Some(format!("{prefix}{id}"));
    }
    Ok(())
}

/// Whether `principal` (if any) may use a final's `part`.
pub(super) fn may_use(extensions: &Extensions, owner: Option<&str>) -> bool {
    extensions
        .get::<Principal>()
        .is_none_or(|principal| principal.owns(owner))
}

/// The subject of the request, recorded as the owner of what it creates.
pub(super) fn owner(extensions: &Extensions) -> Option<String> {
    extensions
        .get::<Principal>()
        .map(|p| p.subject().to_owned())
}

/// Middleware on `{base}{id}`: another subject's upload answers 404, like an unknown one.
/// Costs one info read per request, and only when access control is on.
pub(super) async fn owner_only(
    State(state): State<TusState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(principal) = request.extensions().get::<Principal>() else {
        return next.run(request).await;
    };
    if request.method() == Method::OPTIONS {
        return next.run(request).await;
    }
    let id = request
        .uri()
        .path()
        .strip_prefix(state.config().base_path.as_str())
        .and_then(UploadId::parse);
    // Unknown ids and store failures are the handler's to answer.
    if let Some(id) = id
        && let Ok(info) = state.store().info(&id).await
        && !principal.owns(info.owner.as_deref())
    {
        return TusError::NotFound.into_response();
    }
    next.run(request).await
}

impl From<AuthError> for TusError {
    /// A refusal of the token's limits or quota, answered with its status, headers and
    /// `{message}` body so the client can show the words.
    fn from(e: AuthError) -> Self {
        let body = serde_json::json!({ "message": e.to_string() }).to_string();
        let mut answer = http::Response::new(body);
        *answer.status_mut() = e.status_code();
        let headers = answer.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.extend(e.headers());
        TusError::Refused(Box::new(answer))
    }
}
