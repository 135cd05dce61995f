//! The provider routes a signed-in client calls, on Companion's paths and shapes:
//! `GET /{p}/list/{path?}?cursor=`, `POST /{p}/get/{id}`, `GET /{p}/logout`,
//! `POST /{p}/refresh-token`, `GET /{p}/thumbnail/{id}`, plus `GET /providers` (which
//! providers this server enables, for the widget). An unknown or disabled provider is 404.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::source::ProviderSource;
use super::{ListCtx, Provider, Session};
use crate::error::CompanionError;
use crate::oauth::public_base;
use crate::oauth::sealed::{self, ThumbGrant};
use crate::registry::SourceSpec;
use crate::state::AppState;
use crate::token;
use crate::transfer::request::{TransferRequest, UploadBody};

type Params = Query<HashMap<String, String>>;

/// How long thumbnail links stay valid.
const THUMBNAIL_TTL: i64 = 3600;

pub(super) fn provider(state: &AppState, p: &str) -> Result<Arc<dyn Provider>, CompanionError> {
    state
        .providers()
        .get(p)
        .ok_or_else(|| CompanionError::NotFound("Unknown provider".into()))
}

/// The thumbnail links of a listing by `session` of `p`: hour-long grants for one file each.
pub(super) fn list_ctx(
    state: &AppState,
    p: &str,
    session: &Session,
    headers: &HeaderMap,
) -> Result<ListCtx, CompanionError> {
    let secret = sealed::secret(state)?.to_vec();
    let (provider_id, access) = (p.to_owned(), session.access_token.clone());
    let expires = token::now() + THUMBNAIL_TTL;
    Ok(ListCtx {
        thumbnail_base: format!("{}/{p}/thumbnail/", public_base(state, headers)?),
        grant: Box::new(move |file: &str| {
            sealed::seal(
                &secret,
                &ThumbGrant {
                    k: "thumb".into(),
                    p: provider_id.clone(),
                    a: access.clone(),
                    f: file.to_owned(),
                    e: expires,
                },
            )
        }),
    })
}

/// The `cursor` query parameter: absent when empty, refused when oversized.
pub(super) fn cursor(q: &HashMap<String, String>) -> Result<Option<&str>, CompanionError> {
    let cursor = q
        .get("cursor")
        .map(String::as_str)
        .filter(|c| !c.is_empty());
    if cursor.is_some_and(|c| c.len() > 4096) {
        return Err(CompanionError::BadRequest("Invalid cursor".into()));
    }
    Ok(cursor)
}

pub(super) fn token_of<'a>(
    headers: &'a HeaderMap,
    q: &'a HashMap<String, String>,
) -> Option<&'a str> {
    sealed::request_token(headers, q.get("uppyAuthToken").map(String::as_str))
}

#[utoipa::path(
    get,
    path = "/{provider}/list",
    operation_id = "provider_list_root",
    tag = "providers",
    description = "The root folder (also at `/{provider}/list/`).",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter)."), ("cursor" = Option<String>, Query, description = "The next page's cursor.")),
    responses(
        (status = 200, description = "One page of the folder.", body = crate::providers::ListPage),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn list_root(
    State(state): State<AppState>,
    Path(p): Path<String>,
    q: Params,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    list(state, p, String::new(), q.0, headers).await
}

#[utoipa::path(
    get,
    path = "/{provider}/list/{path}",
    operation_id = "provider_list",
    tag = "providers",
    description = "A folder, by the `requestPath` of its item.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("path" = String, Path, description = "The folder's request path."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter)."),
        ("cursor" = Option<String>, Query, description = "The next page's cursor.")),
    responses(
        (status = 200, description = "One page of the folder.", body = crate::providers::ListPage),
        (status = 400, description = "Invalid cursor.", body = crate::error::ErrorMessage),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn list_path(
    State(state): State<AppState>,
    Path((p, path)): Path<(String, String)>,
    q: Params,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    list(state, p, path, q.0, headers).await
}

async fn list(
    state: AppState,
    p: String,
    path: String,
    q: HashMap<String, String>,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    let provider = provider(&state, &p)?;
    let session = sealed::verify(&state, &p, token_of(&headers, &q))?;
    let ctx = list_ctx(&state, &p, &session, &headers)?;
    let cursor = cursor(&q)?;
    let page = provider
        .list(&session, &ctx, &path, cursor)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    Ok(Json(page).into_response())
}

#[utoipa::path(
    post,
    path = "/{provider}/get/{id}",
    operation_id = "provider_get",
    tag = "providers",
    description = "Starts importing a provider file to a destination; progress on `/api/{token}`.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("id" = String, Path, description = "The file's id."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter).")),
    request_body = crate::transfer::request::UploadBody,
    responses(
        (status = 200, description = "The transfer started.", body = crate::openapi::TransferToken),
        (status = 400, description = "Invalid body or destination.", body = crate::error::ErrorMessage),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn get_file(
    State(state): State<AppState>,
    Path((p, id)): Path<(String, String)>,
    Query(q): Params,
    headers: HeaderMap,
    parts: axum::http::request::Parts,
    body: Result<Json<UploadBody>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let provider = provider(&state, &p)?;
    let Json(body) = body.map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    let sealed_token = token_of(&headers, &q);
    let session = sealed::verify(&state, &p, sealed_token)?;
    let spec = SourceSpec::Provider {
        provider: p.clone(),
        id: id.clone(),
        token: sealed_token.unwrap_or_default().to_owned(),
    };
    // Open the download before answering: a refused access token is a 401 now, which is what
    // makes the client refresh and retry.
    let source = ProviderSource::open_first(provider.clone(), session, &id)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    let request = TransferRequest::from_body(&state, Box::new(source), spec, body)?
        .with_hook_request(&state, &parts)
        .for_principal(&parts)?;
    let token = crate::transfer::start(&state, request).await?;
    Ok(Json(json!({ "token": token })))
}

#[utoipa::path(
    method(get, post),
    path = "/{provider}/logout",
    operation_id = "provider_logout",
    tag = "providers",
    description = "Revokes the provider's access where it can; the client drops its token.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter).")),
    responses(
        (status = 200, description = "Logged out.", body = crate::openapi::LoggedOut),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn logout(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Params,
    headers: HeaderMap,
) -> Result<Json<Value>, CompanionError> {
    let provider = provider(&state, &p)?;
    // A bad token is tolerated: the client drops its copy either way.
    let Ok(session) = sealed::verify(&state, &p, token_of(&headers, &q)) else {
        return Ok(Json(json!({ "ok": true, "revoked": false })));
    };
    let revoked = provider.revoke(&session).await?;
    let mut answer = json!({ "ok": true, "revoked": revoked.revoked });
    if let Some(url) = revoked.manual_url {
        answer["manual_revoke_url"] = json!(url);
    }
    Ok(Json(answer))
}

#[utoipa::path(
    post,
    path = "/{provider}/refresh-token",
    operation_id = "provider_refresh_token",
    tag = "providers",
    description = "A new Uppy auth token with a refreshed provider access token.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter).")),
    responses(
        (status = 200, description = "The new token.", body = crate::openapi::RefreshedToken),
        (status = 400, description = "The provider cannot refresh.", body = crate::error::ErrorMessage),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn refresh_token(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Params,
    headers: HeaderMap,
) -> Result<Json<Value>, CompanionError> {
    let provider = provider(&state, &p)?;
    let session = sealed::verify(&state, &p, token_of(&headers, &q))?;
    if !provider.info().supports_refresh {
        return Err(CompanionError::Unauthorized("Unauthorized"));
    }
    let fresh = provider.refresh(&session).await?;
    let token = token::issue(
        sealed::secret(&state)?,
        &p,
        fresh.to_value(),
        token::now(),
        provider.info().token_max_age,
    );
    Ok(Json(json!({ "uppyAuthToken": token })))
}

#[utoipa::path(
    get,
    path = "/{provider}/thumbnail/{id}",
    operation_id = "provider_thumbnail",
    tag = "providers",
    description = "A file's thumbnail, by the signed link from a list answer.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("id" = String, Path, description = "The file's id."),
        ("t" = String, Query, description = "The thumbnail grant from the list answer.")),
    responses(
        (status = 200, description = "The image.", content_type = "image/*"),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn thumbnail(
    State(state): State<AppState>,
    Path((p, id)): Path<(String, String)>,
    Query(q): Params,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    let provider = provider(&state, &p)?;
    let secret = sealed::secret(&state)?;
    let from_grant = q
        .get("t")
        .and_then(|t| sealed::open::<ThumbGrant>(secret, t))
        .filter(|g| g.k == "thumb" && g.p == p && g.f == id && g.e > token::now())
        .map(|g| super::Session {
            access_token: g.a,
            ..super::Session::default()
        });
    let session = match from_grant {
        Some(s) => s,
        None => sealed::verify(&state, &p, token_of(&headers, &q))?,
    };
    let (kind, stream) = provider
        .thumbnail(&session, &id)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    // Only images are served from this origin: anything else could be a page in our name.
    let kind = HeaderValue::from_str(&kind)
        .ok()
        .filter(|k| k.as_bytes().starts_with(b"image/"))
        .ok_or_else(|| CompanionError::Provider {
            status: 502,
            message: "The thumbnail is not an image".into(),
        })?;
    let mut resp = Body::from_stream(stream).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, kind);
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    Ok(resp)
}

#[utoipa::path(
    get,
    path = "/providers",
    operation_id = "providers_enabled",
    tag = "providers",
    description = "The enabled providers.",
    responses((status = 200, description = "The providers.", body = crate::openapi::Providers)),
)]
pub(crate) async fn enabled(State(state): State<AppState>) -> Json<Value> {
    let mut list: Vec<Value> = state
        .providers()
        .iter()
        .map(|p| {
            let mut entry = json!({
                "id": p.info().id,
                "name": p.info().name,
                "rootFolder": p.info().root,
                "supportsRefreshToken": p.info().supports_refresh,
            });
            // A search provider (Unsplash) has no sign-in and no folders: a widget that only
            // knows the sign-in flow must be able to tell it apart.
            if !p.needs_sign_in() {
                entry["search"] = json!(true);
            }
            // A form sign-in (WebDAV) is not the OAuth popup a widget may only know.
            if p.has_simple_auth() {
                entry["simpleAuth"] = json!(true);
            }
            entry
        })
        .collect();
    if state.google_picker().is_some() {
        list.extend(super::google_picker::listed());
    }
    Json(json!({ "providers": list }))
}

/// The provider routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/providers", get(enabled))
        .route("/{provider}/list", get(list_root))
        .route("/{provider}/list/", get(list_root))
        .route("/{provider}/list/{*path}", get(list_path))
        .route("/{provider}/get/{*id}", post(get_file))
        .route("/{provider}/logout", get(logout).post(logout))
        .route("/{provider}/refresh-token", post(refresh_token))
        .route("/{provider}/thumbnail/{*id}", get(thumbnail))
}
