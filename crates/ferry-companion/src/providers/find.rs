//! Search inside a signed-in account, on Companion's `GET /{p}/search?q=&path=&cursor=` (the
//! route `@uppy/companion-client`'s `Provider.search` calls): the answer has the list shape
//! (`{username, items, nextPagePath}`, `nextPagePath` `?cursor=...` while more follow), so
//! items open, import and show thumbnails as listed ones do. Providers with such a search
//! implement [`super::Provider::search_files`] (Dropbox's `files/search_v2`); the others
//! answer 400 `This provider has no search`.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};

use super::ListPage;
use super::routes::{cursor, list_ctx, provider, token_of};
use super::search::query;
use crate::error::CompanionError;
use crate::oauth::sealed;
use crate::state::AppState;

#[utoipa::path(
    get,
    path = "/{provider}/search",
    operation_id = "provider_search",
    tag = "providers",
    description = "Files matching `q` in the signed-in account (Dropbox), one page in the list shape; follow `nextPagePath` (`?cursor=...`) for more.",
    params(("provider" = String, Path, description = "The provider id (`dropbox`)."),
        ("q" = String, Query, description = "What to search for (1 to 200 characters; may be left out with `cursor`)."),
        ("path" = Option<String>, Query, description = "A folder's `requestPath` to search under (URL-encoded as listed); the whole account when absent."),
        ("cursor" = Option<String>, Query, description = "The next page's cursor, from `nextPagePath`."),
        ("uppy-auth-token" = Option<String>, Header, description = "The provider login's Uppy auth token (or the `uppyAuthToken` query parameter).")),
    responses(
        (status = 200, description = "One page of matches.", body = crate::providers::ListPage),
        (status = 400, description = "Missing or oversized query, invalid path or cursor, or a provider without search.", body = crate::error::ErrorMessage),
        (status = 401, description = "No valid Uppy auth token, or the provider refused its access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn search_files(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Json<ListPage>, CompanionError> {
    let provider = provider(&state, &p)?;
    let session = sealed::verify(&state, &p, token_of(&headers, &q))?;
    let cursor = cursor(&q)?;
    // A next page is named by its cursor alone.
    let text = match cursor {
        Some(_) => q.get("q").map(|t| t.trim().to_owned()).unwrap_or_default(),
        None => query(&q)?,
    };
    // The client sends a folder's requestPath, itself URL-encoded (as Companion decodes it).
    let path = match q.get("path").filter(|p| !p.is_empty()) {
        None => None,
        Some(raw) => Some(
            percent_encoding::percent_decode_str(raw)
                .decode_utf8()
                .map_err(|_| CompanionError::BadRequest("Invalid folder path".into()))?
                .into_owned(),
        ),
    };
    let ctx = list_ctx(&state, &p, &session, &headers)?;
    let page = provider
        .search_files(&session, &ctx, &text, path.as_deref(), cursor)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    Ok(Json(page))
}

/// `GET /{p}/search`.
pub fn router() -> Router<AppState> {
    Router::new().route("/{provider}/search", get(search_files))
}
