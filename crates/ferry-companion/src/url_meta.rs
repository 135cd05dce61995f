//! `POST /url/meta` `{url}` -> `{name, type, size}`: asks the source with HEAD, falling back to
//! GET (whose body is not read), through the SSRF-safe egress client.

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::routing::post;
use axum::{Json, Router};
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::CompanionError;
use crate::names::{disposition_name, path_name};
use crate::state::AppState;

#[derive(Deserialize, utoipa::ToSchema)]
pub(crate) struct MetaBody {
    url: String,
}

/// Maps a failed request to the error the client sees.
pub fn fetch_error(err: reqwest::Error) -> CompanionError {
    if crate::egress::is_refusal(&err) {
        CompanionError::Forbidden("URL not allowed".to_owned())
    } else {
        CompanionError::Unreachable(err.to_string())
    }
}

#[utoipa::path(
    post,
    path = "/url/meta",
    tag = "companion",
    description = "Name, type and size of a link, asked of its server (SSRF-safe).",
    request_body(content = inline(MetaBody)),
    responses(
        (status = 200, description = "What the source announced.", body = crate::openapi::UrlMeta),
        (status = 400, description = "Invalid body, or a URL that is not allowed.", body = crate::error::ErrorMessage),
        (status = 424, description = "The source answered a 4xx.", body = crate::error::ErrorMessage),
        (status = 502, description = "The source is unreachable or answered a 5xx.", body = crate::error::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn meta(
    State(state): State<AppState>,
    body: Result<Json<MetaBody>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let Json(body) = body.map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    let url = state.sources().check(&body.url)?;
    let client = state.sources().client();
    let head = client.head(url.clone()).send().await;
    let resp = match head {
        Ok(r) if r.status().is_success() => r,
        Err(e) if crate::egress::is_refusal(&e) => return Err(fetch_error(e)),
        _ => client.get(url.clone()).send().await.map_err(fetch_error)?,
    };
    if !resp.status().is_success() {
        return Err(CompanionError::SourceStatus(resp.status().as_u16()));
    }
    let headers = resp.headers().clone();
    let final_url = resp.url().clone();
    drop(resp);
    let size = header_str(&headers, CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
    if let (Some(size), Some(max)) = (size, state.config().max_file_size) {
        if size > max {
            return Err(CompanionError::BadRequest("File size exceeds limit".into()));
        }
    }
    let kind = header_str(&headers, CONTENT_TYPE.as_str())
        .map(|t| t.split(';').next().unwrap_or("").trim().to_owned())
        .unwrap_or_default();
    let name = header_str(&headers, CONTENT_DISPOSITION.as_str())
        .and_then(disposition_name)
        .or_else(|| path_name(&final_url))
        .or_else(|| path_name(&url))
        .unwrap_or_else(|| "untitled".to_owned());
    Ok(Json(json!({ "name": name, "type": kind, "size": size })))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `POST /url/meta`.
pub fn router() -> Router<AppState> {
    Router::new().route("/url/meta", post(meta))
}
