//! `POST /url/get` with the upload body -> `{token}` at once. The body is validated first (the
//! source URL by the egress rules, the destination by the allowlist); the transfer itself waits
//! for the progress socket (see [`crate::transfer::run_job`]).

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::request::Parts;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::error::CompanionError;
use crate::registry::SourceSpec;
use crate::state::AppState;
use crate::transfer::request::{TransferRequest, UploadBody};
use crate::transfer::url_source::UrlSource;

#[utoipa::path(
    post,
    path = "/url/get",
    tag = "companion",
    description = "Starts importing a link to a destination (tus, multipart or s3-multipart). \
        The answer's token names the transfer; its progress is on the websocket `/api/{token}`.",
    request_body = UploadBody,
    responses(
        (status = 200, description = "The transfer started.", body = crate::openapi::TransferToken),
        (status = 400, description = "Invalid body, URL or destination.", body = crate::error::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn get(
    State(state): State<AppState>,
    parts: Parts,
    body: Result<Json<UploadBody>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let Json(body) = body.map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    let raw_url = body
        .url
        .as_deref()
        .ok_or_else(|| CompanionError::BadRequest("Invalid request body".into()))?;
    let url = state.sources().check(raw_url)?;
    let spec = SourceSpec::Url {
        url: url.to_string(),
    };
    let source = Box::new(UrlSource::new(state.sources().client().clone(), url));
    let request = TransferRequest::from_body(&state, source, spec, body)?
        .with_hook_request(&state, &parts)
        .for_principal(&parts)?;
    let token = crate::transfer::start(&state, request).await?;
    Ok(Json(json!({ "token": token })))
}

/// `POST /url/get`.
pub fn router() -> Router<AppState> {
    Router::new().route("/url/get", post(get))
}
