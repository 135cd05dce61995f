//! Instagram (`instagram`) on the "Instagram API with Instagram Login" (the Basic Display API
//! it replaced is gone; only Business and Creator accounts can be read). Login swaps the code
//! for a short-lived token and at once for the 60-day one, which `/refresh-token` renews. The
//! list keeps the item shape released `@uppy/instagram` clients expect: root `recent`,
//! carousels flattened into their images and videos, `Instagram <timestamp><n>.<jpeg|mp4>`
//! names, no size, paging on the API's `after` cursor only while it says there is a next page.
//! Media bytes come from CDN URLs the API returns, fetched under the egress policy.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::RANGE;
use serde_json::Value;

use super::api::{self, Api, meta_graph_error as instagram_error};
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::{
    Deps, Download, Item, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo,
    Revoked, Session,
};
use crate::egress::Egress;
use crate::transfer::source::ByteStream;

const MEDIA_FIELDS: &str = "id,media_type,media_url,thumbnail_url,timestamp,children{id,media_type,media_url,thumbnail_url,timestamp}";
const ROOT: &str = "recent";

/// Instagram's endpoints: `api_url` is the Graph API host (`/me/media`, `/access_token`, ...).
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://www.instagram.com/oauth/authorize",
        "https://api.instagram.com/oauth/access_token",
        "https://graph.instagram.com",
    )
}

/// The Instagram provider.
#[derive(Debug)]
pub struct Instagram {
    app: OAuthApp,
    endpoints: Endpoints,
    api: Api,
    cdn: Egress,
    info: ProviderInfo,
    page_size: u32,
}

impl Instagram {
    /// Instagram with `setup`'s app at its endpoints; `deps.sources` (the egress-policed
    /// client) fetches media URLs.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "instagram",
            name: "Instagram",
            root: ROOT,
            oauth: OAuthSpec {
                authorize_url: setup.endpoints.auth_url.clone(),
                scopes: vec!["instagram_business_basic"],
                scope_separator: ",",
                extra: Vec::new(),
                // Instagram Login documents no PKCE parameter.
                pkce: false,
            },
            client_id: setup.app.key.clone(),
            // The long-lived Instagram token's 60 days.
            token_max_age: 60 * 24 * 3600,
            supports_refresh: true,
        };
        Self {
            app: setup.app,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            cdn: deps.sources.clone(),
            info,
            page_size: 50,
        }
        .with_page_size(deps.page_size)
    }

    /// Media asked per page (the API caps it; 1..=100).
    pub fn with_page_size(mut self, size: u32) -> Self {
        self.page_size = size.clamp(1, 100);
        self
    }

    fn url(&self, path: &str) -> String {
        self.endpoints.api(path)
    }

    async fn graph(
        &self,
        token: &str,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Value, ProviderError> {
        let req = self
            .api
            .client()
            .get(self.url(path))
            .query(query)
            .bearer_auth(token);
        self.api.json(req, instagram_error).await
    }

    async fn username(&self, session: &Session) -> Result<Option<String>, ProviderError> {
        if session.username.is_some() {
            return Ok(session.username.clone());
        }
        let me = self
            .graph(
                &session.access_token,
                "/me",
                &[("fields", "user_id,username")],
            )
            .await?;
        Ok(me
            .get("username")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// The media's CDN URL and whether it is a video.
    async fn media_url(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(url::Url, bool), ProviderError> {
        if !valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid media id".into()));
        }
        let media = self
            .graph(
                &session.access_token,
                &format!("/{id}"),
                &[("fields", "id,media_type,media_url,thumbnail_url")],
            )
            .await?;
        if media.get("media_type").and_then(Value::as_str) == Some("CAROUSEL_ALBUM") {
            return Err(ProviderError::Unsupported(
                "An album cannot be downloaded; pick its photos".into(),
            ));
        }
        let video = media.get("media_type").and_then(Value::as_str) == Some("VIDEO");
        let raw = media
            .get("media_url")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ProviderError::Unsupported("Instagram offers no file for this media".into())
            })?;
        // A URL the provider returned: held to the same egress rules as a link import.
        let url = self.cdn.check(raw).map_err(|_| ProviderError::Status {
            status: 400,
            message: "URL not allowed".into(),
        })?;
        Ok((url, video))
    }
}

#[async_trait::async_trait]
impl Provider for Instagram {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    async fn exchange_code(
        &self,
        code: &str,
        redirect_uri: &str,
        _verifier: Option<&str>,
    ) -> Result<Session, ProviderError> {
        // Instagram appends `#_` to the redirect; a browser drops fragments, but be lenient.
        let code = code.trim_end_matches("#_");
        let token = TokenEndpoint {
            api: &self.api,
            url: &self.endpoints.token_url,
            app: &self.app,
            read: instagram_error,
            client_auth: ClientAuth::Form,
        };
        let short = token.exchange_code(code, redirect_uri, None).await?;
        // The short-lived token lasts an hour: swap it for the 60-day one at once.
        let req = self.api.client().get(self.url("/access_token")).query(&[
            ("grant_type", "ig_exchange_token"),
            ("client_secret", self.app.secret.as_str()),
            ("access_token", short.access_token.as_str()),
        ]);
        let long =
            api::token_answer(&self.api.json(req, instagram_error).await?).ok_or_else(|| {
                ProviderError::Unreachable("exchange answer without access_token".into())
            })?;
        let mut session = Session {
            access_token: long.access_token,
            ..Session::default()
        };
        session.username = self.username(&session).await?;
        Ok(session)
    }

    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        let req = self
            .api
            .client()
            .get(self.url("/refresh_access_token"))
            .query(&[
                ("grant_type", "ig_refresh_token"),
                ("access_token", session.access_token.as_str()),
            ]);
        let answer =
            api::token_answer(&self.api.json(req, instagram_error).await?).ok_or_else(|| {
                ProviderError::Unreachable("refresh answer without access_token".into())
            })?;
        let mut next = session.clone();
        next.access_token = answer.access_token;
        Ok(next)
    }

    async fn revoke(&self, _session: &Session) -> Result<Revoked, ProviderError> {
        Ok(Revoked {
            revoked: false,
            manual_url: Some("https://www.instagram.com/accounts/manage_access/"),
        })
    }

    async fn list(
        &self,
        session: &Session,
        _ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        if !path.is_empty() && path != ROOT {
            return Err(ProviderError::BadRequest("Invalid folder id".into()));
        }
        let limit = self.page_size.to_string();
        let mut query = vec![("fields", MEDIA_FIELDS), ("limit", limit.as_str())];
        if let Some(c) = cursor {
            query.push(("after", c));
        }
        let page = self
            .graph(&session.access_token, "/me/media", &query)
            .await?;
        let mut items = Vec::new();
        for media in page
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match media.pointer("/children/data").and_then(Value::as_array) {
                Some(children) => {
                    for (i, child) in children.iter().enumerate() {
                        items.extend(media_item(child, Some(i), media));
                    }
                }
                None => items.extend(media_item(media, None, media)),
            }
        }
        // `paging.cursors` is present on the last page too; only `next` says there is more.
        let next_page_path = page
            .pointer("/paging/next")
            .and_then(Value::as_str)
            .and_then(|_| {
                page.pointer("/paging/cursors/after")
                    .and_then(Value::as_str)
            })
            .map(|after| {
                format!(
                    "{ROOT}?cursor={}",
                    utf8_percent_encode(after, NON_ALPHANUMERIC)
                )
            });
        Ok(ListPage {
            username: self.username(session).await?,
            items,
            next_page_path,
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let (url, video) = self.media_url(session, id).await?;
        let mut req = self.cdn.client().get(url);
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
                message: format!("HTTP {status}: Instagram's media server refused the download"),
            });
        }
        let (size, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size,
            name: Some(format!(
                "Instagram {id}.{}",
                if video { "mp4" } else { "jpeg" }
            )),
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        let (url, _) = self.media_url(session, id).await?;
        let resp = self
            .cdn
            .client()
            .get(url)
            .send()
            .await
            .map_err(|e| ProviderError::Unreachable(e.to_string()))?;
        api::stream_image(resp)
    }
}

/// One image or video as an item; `index` numbers carousel children; `parent` gives children
/// the album's timestamp when they lack one.
fn media_item(media: &Value, index: Option<usize>, parent: &Value) -> Option<Item> {
    let id = media
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| valid_id(i))?;
    // Media without a URL (copyrighted audio, for instance) cannot be downloaded.
    let media_url = media.get("media_url").and_then(Value::as_str)?;
    let video = media.get("media_type").and_then(Value::as_str) == Some("VIDEO");
    let preview = if video {
        media
            .get("thumbnail_url")
            .and_then(Value::as_str)
            .unwrap_or(media_url)
    } else {
        media_url
    };
    let timestamp = media
        .get("timestamp")
        .or_else(|| parent.get("timestamp"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let n = index.map(|i| i.to_string()).unwrap_or_default();
    let ext = if video { "mp4" } else { "jpeg" };
    Some(Item {
        is_folder: false,
        icon: Some(preview.to_owned()),
        id: id.to_owned(),
        name: format!("Instagram {timestamp}{n}.{ext}"),
        request_path: id.to_owned(),
        modified_date: Some(timestamp.to_owned()).filter(|t| !t.is_empty()),
        mime_type: Some(if video { "video/mp4" } else { "image/jpeg" }.to_owned()),
        size: None,
        thumbnail: Some(preview.to_owned()),
        custom: Default::default(),
    })
}

/// Instagram media ids are digits.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn carousels_flatten_and_media_without_url_are_skipped() {
        let album = json!({"id": "1", "media_type": "CAROUSEL_ALBUM", "timestamp": "T",
        "children": {"data": [
            {"id": "11", "media_type": "IMAGE", "media_url": "https://cdn/11"},
            {"id": "12", "media_type": "VIDEO", "media_url": "https://cdn/12", "thumbnail_url": "https://cdn/12t"}
        ]}});
        let a = media_item(&album["children"]["data"][0], Some(0), &album).expect("image");
        let b = media_item(&album["children"]["data"][1], Some(1), &album).expect("video");
        assert_eq!(
            (a.name.as_str(), a.mime_type.as_deref()),
            ("Instagram T0.jpeg", Some("image/jpeg"))
        );
        assert_eq!(
            (b.name.as_str(), b.thumbnail.as_deref()),
            ("Instagram T1.mp4", Some("https://cdn/12t"))
        );
        assert!(media_item(&json!({"id": "2", "media_type": "IMAGE"}), None, &album).is_none());
        assert!(media_item(&json!({"id": "../x", "media_url": "u"}), None, &album).is_none());
    }

    #[test]
    fn error_190_is_an_auth_error() {
        assert!(matches!(
            instagram_error(400, br#"{"error":{"code":190,"message":"expired"}}"#),
            ProviderError::Auth
        ));
        assert!(matches!(
            instagram_error(400, br#"{"error":{"code":100}}"#),
            ProviderError::Status { status: 400, .. }
        ));
    }
}
