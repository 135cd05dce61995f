//! Search providers (Unsplash): no sign-in, the server holds the API key. Served on Companion's
//! paths so `@uppy/unsplash` works unchanged: `GET /search/{p}/list?q=&cursor=` answers
//! `{searchedFor, username, items, nextPageQuery}` (items carry the photographer as `author`,
//! which Uppy's item view links), and `POST /search/{p}/get/{id}` starts an import as any
//! provider's `get` does.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};

use super::source::ProviderSource;
use super::{Item, Provider, Session};
use crate::error::CompanionError;
use crate::registry::SourceSpec;
use crate::state::AppState;
use crate::transfer::request::{TransferRequest, UploadBody};

/// Longest search query accepted (characters).
pub const MAX_QUERY: usize = 200;

/// Last page a client may ask for (Unsplash stops well before).
const MAX_PAGE: u32 = 10_000;

/// A result's photographer, for the attribution the provider's guidelines require.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct Author {
    pub name: String,
    /// Their profile page.
    pub url: String,
}

/// One search result: a list item plus its author.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct SearchItem {
    #[serde(flatten)]
    pub item: Item,
    pub author: Author,
}

/// One page of results, and whether another follows.
#[derive(Debug)]
pub struct SearchResults {
    pub items: Vec<SearchItem>,
    pub more: bool,
}

/// The answer of `/search/{p}/list`, in Companion's shape.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchPage {
    pub searched_for: String,
    /// Always null: nobody is signed in.
    pub username: Option<String>,
    pub items: Vec<SearchItem>,
    /// The query string of the next page (`cursor=2`), to append to the next request.
    pub next_page_query: Option<String>,
}

fn search_provider(state: &AppState, p: &str) -> Result<Arc<dyn Provider>, CompanionError> {
    state
        .providers()
        .get(p)
        .filter(|p| !p.needs_sign_in())
        .ok_or_else(|| CompanionError::NotFound("Unknown search provider".into()))
}

/// The query, checked: present, not blank, not oversized.
pub(super) fn query(q: &HashMap<String, String>) -> Result<String, CompanionError> {
    let text = q.get("q").map(|s| s.trim()).unwrap_or_default();
    if text.is_empty() {
        return Err(CompanionError::BadRequest("Search query missing".into()));
    }
    if text.chars().count() > MAX_QUERY {
        return Err(CompanionError::BadRequest(format!(
            "Search query too long (at most {MAX_QUERY} characters)"
        )));
    }
    Ok(text.to_owned())
}

/// The page number in `cursor` (1 when absent).
fn page(q: &HashMap<String, String>) -> Result<u32, CompanionError> {
    match q
        .get("cursor")
        .map(String::as_str)
        .filter(|c| !c.is_empty())
    {
        None => Ok(1),
        Some(c) => c
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| CompanionError::BadRequest("Invalid cursor".into())),
    }
}

#[utoipa::path(
    get,
    path = "/search/{provider}/list",
    operation_id = "search_list",
    tag = "providers",
    description = "One page of a search provider's results (no sign-in: the server holds the key).",
    params(("provider" = String, Path, description = "The search provider: `unsplash`."),
        ("q" = String, Query, description = "What to search for (1 to 200 characters)."),
        ("cursor" = Option<String>, Query, description = "The page, from the previous answer's `nextPageQuery`.")),
    responses(
        (status = 200, description = "One page of results.", body = SearchPage),
        (status = 400, description = "Missing or oversized query, or an invalid cursor.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled search provider.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<SearchPage>, CompanionError> {
    let provider = search_provider(&state, &p)?;
    let text = query(&q)?;
    let page = page(&q)?;
    let results = provider
        .search(&text, page)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    Ok(Json(SearchPage {
        searched_for: text,
        username: None,
        items: results.items,
        next_page_query: results.more.then(|| format!("cursor={}", page + 1)),
    }))
}

#[utoipa::path(
    post,
    path = "/search/{provider}/get/{id}",
    operation_id = "search_get",
    tag = "providers",
    description = "Starts importing a search result to a destination (Unsplash: with the download-tracking call its guidelines require); progress on `/api/{token}`.",
    params(("provider" = String, Path, description = "The search provider: `unsplash`."), ("id" = String, Path, description = "The result's id.")),
    request_body = crate::transfer::request::UploadBody,
    responses(
        (status = 200, description = "The transfer started.", body = crate::openapi::TransferToken),
        (status = 400, description = "Invalid body, id or destination.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled search provider, or no such result.", body = crate::error::ErrorMessage),
        (status = 429, description = "The provider still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until the provider can be asked again."))),
    ),
)]
pub(crate) async fn get_file(
    State(state): State<AppState>,
    Path((p, id)): Path<(String, String)>,
    parts: axum::http::request::Parts,
    body: Result<Json<UploadBody>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let provider = search_provider(&state, &p)?;
    let Json(body) = body.map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    // Nothing sealed to carry: another instance taking over opens it with the server's key.
    let spec = SourceSpec::Provider {
        provider: p.clone(),
        id: id.clone(),
        token: String::new(),
    };
    let source = ProviderSource::open_first(provider.clone(), Session::default(), &id)
        .await
        .map_err(|e| e.for_route(provider.as_ref()))?;
    let request = TransferRequest::from_body(&state, Box::new(source), spec, body)?
        .with_hook_request(&state, &parts)
        .for_principal(&parts)?;
    let token = crate::transfer::start(&state, request).await?;
    Ok(Json(json!({ "token": token })))
}

/// The search routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/search/{provider}/list", get(list))
        .route("/search/{provider}/get/{*id}", post(get_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cursors_are_page_numbers() {
        assert_eq!(page(&q(&[])).ok(), Some(1));
        assert_eq!(page(&q(&[("cursor", "3")])).ok(), Some(3));
        for bad in ["0", "-1", "x", "10001"] {
            assert!(page(&q(&[("cursor", bad)])).is_err(), "{bad}");
        }
    }
}
