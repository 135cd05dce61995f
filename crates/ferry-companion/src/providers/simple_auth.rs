//! `POST /{p}/simple-auth`: Companion's sign-in with a form, for providers without OAuth
//! (WebDAV). Uppy's client posts `{"form": {...}}`; the provider checks the form against its
//! server and the session is sealed into an Uppy auth token, answered as `{"uppyAuthToken"}`.
//! The form (a URL that may hold a password) is never logged.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::error::CompanionError;
use crate::oauth::sealed;
use crate::state::AppState;
use crate::token;

#[utoipa::path(
    post,
    path = "/{provider}/simple-auth",
    operation_id = "provider_simple_auth",
    tag = "providers",
    description = "Signs in with a form instead of OAuth (WebDAV: `{\"form\": {\"webdavUrl\"}}`, \
        the URL may carry `user:app-password@`; `username` and `password` fields are also taken).",
    params(("provider" = String, Path, description = "A provider that signs in with a form (`webdav`).")),
    request_body = Object,
    responses(
        (status = 200, description = "Signed in.", body = crate::openapi::RefreshedToken),
        (status = 400, description = "Invalid form, URL or address, wrong credentials, or a provider that signs in through OAuth.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The server still limits requests after the waits allowed.", body = crate::error::RateLimitedMessage),
        (status = 502, description = "The server's answer is not a WebDAV listing Ferry reads.", body = crate::error::ErrorMessage),
    ),
)]
pub(crate) async fn simple_auth(
    State(state): State<AppState>,
    Path(p): Path<String>,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let provider = state
        .providers()
        .get(&p)
        .ok_or_else(|| CompanionError::NotFound("Unknown provider".into()))?;
    if !provider.has_simple_auth() {
        return Err(CompanionError::BadRequest(format!(
            "{} signs in through OAuth",
            provider.info().name
        )));
    }
    let Json(body) = body.map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    let form = body
        .get("form")
        .filter(|f| f.is_object())
        .ok_or_else(|| CompanionError::BadRequest("Invalid request body".into()))?;
    let session = provider
        .simple_auth(form)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    let token = token::issue(
        sealed::secret(&state)?,
        &p,
        session.to_value(),
        token::now(),
        provider.info().token_max_age,
    );
    Ok(Json(json!({ "uppyAuthToken": token })))
}

/// The route.
pub fn router() -> Router<AppState> {
    Router::new().route("/{provider}/simple-auth", post(simple_auth))
}
