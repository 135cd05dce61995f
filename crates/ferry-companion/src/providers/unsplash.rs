//! Unsplash (API v1), a search provider: no sign-in, every call carries the server's Access Key
//! as `Authorization: Client-ID {key}`. Search is `GET /search/photos?query=&page=&per_page=`;
//! an import reads the photo (`GET /photos/{id}`), fetches its original image (`urls.raw`)
//! through the egress-policed client, and makes the download-tracking call Unsplash's API
//! guidelines require of every import (`GET links.download_location`). Attribution (the
//! photographer's name and profile link) comes with each search result.

use reqwest::header::{AUTHORIZATION, RANGE};
use serde_json::Value;

use super::api::{self, Api};
use super::config::{Endpoints, ProviderSetup};
use super::search::{Author, SearchItem, SearchResults};
use super::{
    Deps, Download, Item, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo,
    Revoked, Session,
};
use crate::egress::Egress;
use crate::transfer::source::ByteStream;

/// Unsplash answers at most 30 results per page.
const MAX_PER_PAGE: u32 = 30;

/// The Unsplash provider.
#[derive(Debug)]
pub struct Unsplash {
    key: String,
    endpoints: Endpoints,
    api: Api,
    images: Egress,
    info: ProviderInfo,
    per_page: u32,
}

impl Unsplash {
    /// Unsplash with `setup.app.key` (the Access Key) at `setup.endpoints.api_url`;
    /// `deps.sources` (the egress-policed client) fetches the images.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "unsplash",
            name: "Unsplash",
            root: "",
            // No user sign-in: the OAuth routes refuse this provider (see `needs_sign_in`).
            oauth: OAuthSpec {
                authorize_url: String::new(),
                scopes: Vec::new(),
                scope_separator: " ",
                extra: Vec::new(),
                pkce: false,
            },
            client_id: String::new(),
            token_max_age: 0,
            supports_refresh: false,
        };
        Self {
            key: setup.app.key,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            images: deps.sources.clone(),
            info,
            per_page: deps.page_size.clamp(1, MAX_PER_PAGE),
        }
    }

    fn auth(&self) -> String {
        format!("Client-ID {}", self.key)
    }

    async fn call(&self, url: &str, query: &[(&str, String)]) -> Result<Value, ProviderError> {
        let req = self
            .api
            .client()
            .get(url)
            .query(query)
            .header(AUTHORIZATION, self.auth());
        self.api.json(req, read_error).await
    }

    /// The download-tracking URL of `photo`: its `links.download_location` when that is on the
    /// configured API host (the Access Key goes with it, so never to another host), else the
    /// documented `/photos/{id}/download`.
    fn tracking_url(&self, photo: &Value, id: &str) -> String {
        let own = format!("{}/", self.endpoints.api_url.trim_end_matches('/'));
        photo
            .pointer("/links/download_location")
            .and_then(Value::as_str)
            .filter(|u| u.starts_with(&own))
            .map(str::to_owned)
            .unwrap_or_else(|| self.endpoints.api(&format!("/photos/{id}/download")))
    }
}

fn no_sign_in() -> ProviderError {
    ProviderError::BadRequest("Unsplash needs no sign-in".into())
}

/// Unsplash ids are short URL-safe strings; anything else is refused before a call.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Unsplash's errors: `{"errors": ["..."]}`.
fn read_error(status: u16, body: &[u8]) -> ProviderError {
    let detail = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        v.get("errors")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .next()
            .map(str::to_owned)
    });
    let message = match detail {
        Some(d) => format!("HTTP {status}: {d}"),
        None => format!("HTTP {status}: Unsplash refused the request"),
    };
    // A refused Access Key is the server's configuration, not the user's sign-in: never a 401
    // that would send the page to a sign-in it cannot do.
    let status = if status == 401 { 502 } else { status };
    ProviderError::Status { status, message }
}

/// A search result as an item (Companion's shape), with its attribution.
fn photo_item(photo: &Value) -> Option<SearchItem> {
    let id = photo
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| valid_id(i))?;
    let thumb = photo
        .pointer("/urls/thumb")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let author = Author {
        name: photo
            .pointer("/user/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        url: photo
            .pointer("/user/links/html")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    Some(SearchItem {
        item: Item {
            is_folder: false,
            icon: thumb.clone(),
            id: id.to_owned(),
            name: photo_name(photo, id),
            request_path: id.to_owned(),
            modified_date: photo
                .get("created_at")
                .and_then(Value::as_str)
                .map(str::to_owned),
            mime_type: Some("image/jpeg".into()),
            size: None,
            thumbnail: thumb,
            custom: Default::default(),
        },
        author,
    })
}

/// The description cut to 30 characters (as Companion names them), or the id, plus `.jpg`.
fn photo_name(photo: &Value, id: &str) -> String {
    let described = ["description", "alt_description"]
        .iter()
        .filter_map(|k| photo.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .find(|d| !d.is_empty());
    match described {
        Some(d) if d.chars().count() > 30 => {
            format!("{}....jpg", d.chars().take(27).collect::<String>())
        }
        Some(d) => format!("{d}.jpg"),
        None => format!("{id}.jpg"),
    }
}

#[async_trait::async_trait]
impl Provider for Unsplash {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn needs_sign_in(&self) -> bool {
        false
    }

    async fn exchange_code(
        &self,
        _code: &str,
        _redirect_uri: &str,
        _verifier: Option<&str>,
    ) -> Result<Session, ProviderError> {
        Err(no_sign_in())
    }

    async fn refresh(&self, _session: &Session) -> Result<Session, ProviderError> {
        Err(no_sign_in())
    }

    async fn revoke(&self, _session: &Session) -> Result<Revoked, ProviderError> {
        Ok(Revoked {
            revoked: false,
            manual_url: None,
        })
    }

    async fn list(
        &self,
        _session: &Session,
        _ctx: &ListCtx,
        _path: &str,
        _cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        Err(ProviderError::BadRequest(
            "Unsplash is searched, not listed: use /search/unsplash/list?q=".into(),
        ))
    }

    async fn search(&self, query: &str, page: u32) -> Result<SearchResults, ProviderError> {
        let answer = self
            .call(
                &self.endpoints.api("/search/photos"),
                &[
                    ("query", query.to_owned()),
                    ("page", page.to_string()),
                    ("per_page", self.per_page.to_string()),
                ],
            )
            .await?;
        let items = answer
            .get("results")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(photo_item).collect())
            .unwrap_or_default();
        let pages = answer
            .get("total_pages")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Ok(SearchResults {
            items,
            more: u64::from(page) < pages,
        })
    }

    /// Opens the original image at `from`. A start from byte 0 is an import starting, so it
    /// makes the download-tracking call; a resume from an offset is the same import going on.
    async fn download(
        &self,
        _session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        if !valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid photo id".into()));
        }
        let photo = self
            .call(&self.endpoints.api(&format!("/photos/{id}")), &[])
            .await?;
        let url = photo
            .pointer("/urls/raw")
            .and_then(Value::as_str)
            .ok_or_else(|| ProviderError::Status {
                status: 502,
                message: "Unexpected Unsplash answer: no image URL".into(),
            })?;
        let mut req = self.images.client().get(url);
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        let resp = req.send().await.map_err(|e| {
            if crate::egress::is_refusal(&e) {
                ProviderError::Status {
                    status: 400,
                    message: "URL not allowed".into(),
                }
            } else {
                ProviderError::Unreachable(e.to_string())
            }
        })?;
        if !resp.status().is_success() {
            let status = resp.status().as_u16();
            return Err(ProviderError::Status {
                status,
                message: format!("HTTP {status}: Unsplash's image server refused the download"),
            });
        }
        if from == 0 {
            self.call(&self.tracking_url(&photo, id), &[]).await?;
        }
        let (size, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size,
            name: Some(photo_name(&photo, id)),
        })
    }

    async fn thumbnail(
        &self,
        _session: &Session,
        _id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        // Search results link Unsplash's own thumbnails (hotlinking is what the guidelines ask).
        Err(ProviderError::BadRequest(
            "Unsplash thumbnails are linked directly".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_companion_and_ids_are_checked() {
        let long = json!({"description": "A very long description of a mountain lake"});
        assert_eq!(photo_name(&long, "x"), "A very long description of ....jpg");
        assert_eq!(
            photo_name(&json!({"description": null, "alt_description": "cat"}), "x"),
            "cat.jpg"
        );
        assert_eq!(photo_name(&json!({}), "abc"), "abc.jpg");
        assert!(valid_id("Ab-_9") && !valid_id("../x") && !valid_id(""));
    }

    #[test]
    fn a_refused_key_is_not_a_sign_in_error() {
        let e = read_error(
            401,
            br#"{"errors":["OAuth error: The access token is invalid"]}"#,
        );
        assert_eq!(
            e.to_string(),
            "HTTP 401: OAuth error: The access token is invalid"
        );
        assert!(matches!(e, ProviderError::Status { status: 502, .. }));
    }
}
