//! `/{p}/send-token`: the popup's last step, which hands the login's token to the page. With an
//! `authCallbackToken` in the login's state the token goes over the auth socket, but only when
//! this browser holds the socket's binding cookie ([`super::binding`]); without it the page
//! posts the token to its opener at the sealed origin and reloads itself a few times (the
//! socket may still be connecting), then fails with a message. Without one it is posted to the
//! opener at the sealed origin (released Uppy clients). An expired login state hands nothing.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::handoff::Outcome;
use super::routes::provider;
use super::sealed::{self, LoginState};
use super::{binding, handoff_origin_allowed, pages};
use crate::error::CompanionError;
use crate::state::AppState;
use crate::token;

/// Loads of the page while it waits for the binding cookie (about half a second apart).
pub const ATTEMPTS: u32 = 10;

#[utoipa::path(
    get,
    path = "/{provider}/send-token",
    operation_id = "provider_send_token",
    tag = "providers",
    description = "Hands an existing Uppy auth token to the page (HTML), as Companion's route. \
        Over the auth socket only to the browser holding that socket's binding cookie.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter)."), ("state" = String, Query, description = "The sealed login state."),
        ("attempt" = Option<u32>, Query, description = "How many times the page reloaded itself waiting for the binding cookie.")),
    responses(
        (status = 200, description = "The HTML hand-off page (or the page waiting for the socket's cookie).", content_type = "text/html"),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 400, description = "Invalid or expired login state, origin not allowed, or this browser never opened the login's socket (HTML page).", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
    ),
)]
pub(crate) async fn send_token(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    provider(&state, &p)?;
    let token = sealed::request_token(&headers, q.get("uppyAuthToken").map(String::as_str));
    sealed::verify(&state, &p, token)?;
    let token = token.unwrap_or_default().to_owned();
    let secret = sealed::secret(&state)?;
    let login: LoginState = q
        .get("state")
        .and_then(|s| sealed::open(secret, s))
        .filter(|l: &LoginState| l.k == "state" && l.p == p)
        .ok_or_else(|| CompanionError::BadRequest("Invalid login state".into()))?;
    if login.e <= token::now() {
        return Ok(pages::failure(
            StatusCode::BAD_REQUEST,
            "The login took too long; start it again",
        ));
    }
    if !handoff_origin_allowed(&state, &login.o) {
        return Err(CompanionError::BadRequest("Origin not allowed".into()));
    }
    let data = json!({ "token": token });
    let Some(id) = &login.t else {
        return Ok(pages::post_message(&data, &login.o));
    };
    if !binding::holds(&state, &headers, secret, id) {
        let attempt: u32 = q.get("attempt").and_then(|a| a.parse().ok()).unwrap_or(0);
        if attempt >= ATTEMPTS {
            return Ok(pages::failure(
                StatusCode::BAD_REQUEST,
                "this window cannot hand the sign-in to the page that started it (this browser \
                 did not open that page's connection to the server). Close this window and \
                 sign in again from the page",
            ));
        }
        // Relative to this page, so a path prefix in front of the server stays.
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(q.iter().filter(|(k, _)| *k != "attempt"))
            .append_pair("attempt", &(attempt + 1).to_string())
            .finish();
        let next = format!("send-token?{query}");
        return Ok(pages::waiting(&data, &login.o, &next));
    }
    let keep = state.config().providers.handoff_keep;
    let outcome = Outcome {
        origin: login.o.clone(),
        token: Some(token),
    };
    state.handoff().publish(id, outcome, keep).await;
    let mut resp = pages::success();
    if let Ok(v) = HeaderValue::from_str(&binding::clear_cookie(&state, &headers, id)) {
        resp.headers_mut().append(SET_COOKIE, v);
    }
    Ok(resp)
}
