//! `POST /url/meta` `{url}` -> `{name, type, size}`: asks the source with HEAD, falling back to
//! GET (whose body is not read), through the SSRF-safe egress client.

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::routing::post;
use axum::{Json, Router};
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use crate::error::CompanionError;
use crate::state::AppState;

#[derive(Deserialize)]
struct MetaBody {
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

async fn meta(
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

/// The file name from a `Content-Disposition` value (`filename*=UTF-8''...` wins).
pub fn disposition_name(value: &str) -> Option<String> {
    let mut plain = None;
    for part in value.split(';').map(str::trim) {
        let Some((key, val)) = part.split_once('=') else {
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "filename*" => {
                let encoded = val.trim().splitn(3, '\'').nth(2)?;
                let decoded = percent_encoding::percent_decode_str(encoded)
                    .decode_utf8()
                    .ok()?;
                return sanitize(&decoded);
            }
            "filename" => plain = sanitize(val.trim().trim_matches('"')),
            _ => {}
        }
    }
    plain
}

/// The last path segment of `url`, percent-decoded.
pub fn path_name(url: &Url) -> Option<String> {
    let last = url.path_segments()?.next_back()?;
    let decoded = percent_encoding::percent_decode_str(last)
        .decode_utf8()
        .ok()?;
    sanitize(&decoded)
}

fn sanitize(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next()?.trim();
    let clean: String = base.chars().filter(|c| !c.is_control()).collect();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

/// `POST /url/meta`.
pub fn router() -> Router<AppState> {
    Router::new().route("/url/meta", post(meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_disposition_and_path() {
        assert_eq!(
            disposition_name(r#"attachment; filename="a b.txt""#).as_deref(),
            Some("a b.txt")
        );
        assert_eq!(
            disposition_name("attachment; filename=x.bin; filename*=UTF-8''%C3%A9t%C3%A9.txt")
                .as_deref(),
            Some("été.txt")
        );
        assert_eq!(
            disposition_name(r#"attachment; filename="../../etc/passwd""#).as_deref(),
            Some("passwd")
        );
        let url = Url::parse("https://x.example/dir/my%20file.png?q=1").expect("url");
        assert_eq!(path_name(&url).as_deref(), Some("my file.png"));
        let root = Url::parse("https://x.example/").expect("url");
        assert_eq!(path_name(&root), None);
    }
}
