//! Access control inside the endpoint, when the server runs with `--auth-secret`: the gate in
//! front has already checked the token and left its [`Principal`] in the request. Here an
//! upload is admitted under the token's limits and recorded as the subject's (under the token's
//! `prefix`, which must make a safe storage key), and every request on an existing upload from
//! another subject is answered as if the upload did not exist.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ferry_auth::{Admission, AuthError, Principal};
use ferry_hooks::StorageKey;

use super::error::{DraftError, without_body};
use super::path_id::Id;
use super::state::TusState;
use crate::id::UploadId;
use crate::protocol::TusError;
use crate::protocol::ietf::is_draft_request;
use crate::store::{NewUpload, StoreError};

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
        // The same rule as a hook's storage key: a prefix such as `../` must not place the
        // bytes outside the store.
        let key = StorageKey::parse(&format!("{prefix}{id}")).map_err(|why| {
            tracing::warn!(subject = principal.subject(), %why, "token prefix refused");
            TusError::UnsafePrefix
        })?;
        upload.storage_key = Some(key.as_str().to_owned());
    }
    Ok(())
}

/// Admits a final upload of `total` bytes (the sum of its parts' lengths, or of what they hold
/// when `all_known` is false) for the request's principal: a final is a copy of its parts, so
/// it is held to the token's `max_size` and charged to the quota like any upload of its size.
/// A final whose size cannot be known yet (a part's length is deferred) could not be charged
/// what its parts grow to, so it is refused while the token limits size or a quota applies.
pub(super) fn claim_final(
    extensions: &Extensions,
    total: u64,
    all_known: bool,
) -> Result<(), TusError> {
    let Some(principal) = extensions.get::<Principal>() else {
        return Ok(());
    };
    if !all_known && principal.limits_size() {
        return Err(TusError::UnknownPartLength);
    }
    Ok(principal.charge_rest(0, total)?)
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

/// Middleware on `{base}{id}`: parses the id (the [`Id`] the handler then extracts, so both
/// see one value) and, under access control, answers another subject's upload 404, like an
/// unknown one. A path that names no upload is 404 here, whoever asks. Costs one info read per
/// request, and only when access control is on.
pub(super) async fn owner_only(
    State(state): State<TusState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::OPTIONS {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let id = match Id::from_request_parts(&mut parts, &state).await {
        Ok(Id(id)) => id,
        Err(e) => return refusal(&state, &parts, e),
    };
    if let Some(principal) = parts.extensions.get::<Principal>() {
        // Fails closed: an info that cannot be read admits no one.
        let refused = match state.store().info(&id).await {
            Ok(info) if principal.owns(info.owner.as_deref()) => None,
            Ok(_) | Err(StoreError::NotFound) => Some(TusError::NotFound),
            Err(e) => Some(e.into()),
        };
        if let Some(e) = refused {
            return refusal(&state, &parts, e);
        }
    }
    next.run(Request::from_parts(parts, body)).await
}

/// `e` as the verb's handler would answer it: in the draft's form for a draft request, and
/// without a body for HEAD.
fn refusal(state: &TusState, parts: &Parts, e: TusError) -> Response {
    let response = if state.config().ietf_draft && is_draft_request(&parts.headers) {
        DraftError::from(e).into_response()
    } else {
        e.into_response()
    };
    if parts.method == Method::HEAD {
        without_body(response)
    } else {
        response
    }
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
