//! Facebook (`facebook`, Graph API): the person's albums, then an album's photos, imported at
//! their largest rendition, on Companion's routes and answer shapes so `@uppy/facebook` works
//! unchanged. Sign-in is Facebook Login's code flow (scopes `email` and `user_photos`); the
//! short-lived token is swapped at once for the long-lived one (about 60 days; Companion keeps
//! the short one, which dies within hours). Facebook has no refresh tokens.
//!
//! Every Graph call carries `appsecret_proof` (HMAC-SHA256 of the token with the app secret),
//! as apps with "Require App Secret" need and as Companion sends. Companion calls Graph without
//! a version (the app's default version then applies); Ferry pins [`GRAPH_VERSION`] so a
//! deployment does not change behaviour when Facebook retires its app's default. Paging follows
//! `after` only while Graph says there is a next page. Logout deletes the app's permissions
//! (`DELETE /me/permissions`), as Companion does.

mod items;

use hmac::{Hmac, Mac};
use reqwest::header::RANGE;
use reqwest::{Method, RequestBuilder};
use serde_json::Value;
use sha2::Sha256;

use super::api::{self, Api, meta_graph_error as graph_error};
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::{
    Deps, Download, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo, Revoked,
    Session,
};
use crate::egress::Egress;
use crate::transfer::source::ByteStream;

/// The Graph API version of every call (and of the login dialog in the default endpoints).
pub const GRAPH_VERSION: &str = "v25.0";
/// Albums and photos asked per page (Graph's default is 25; it allows 100).
const MAX_PAGE: u32 = 100;
/// A long-lived user token lasts about 60 days: the Uppy auth token as long.
const SESSION_DAYS: i64 = 60;

/// Facebook's endpoints: the login dialog, and the Graph host as `api_url` (the token
/// exchange is `/{version}/oauth/access_token` there; `token_url` is unused).
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        &format!("https://www.facebook.com/{GRAPH_VERSION}/dialog/oauth"),
        "",
        "https://graph.facebook.com",
    )
}

/// The Facebook provider.
#[derive(Debug)]
pub struct Facebook {
    app: OAuthApp,
    endpoints: Endpoints,
    api: Api,
    cdn: Egress,
    info: ProviderInfo,
    page_size: u32,
}

impl Facebook {
    /// Facebook with `setup`'s app at its endpoints; `deps.sources` (the egress-policed client)
    /// fetches the image URLs Graph returns.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "facebook",
            name: "Facebook",
            root: "",
            oauth: OAuthSpec {
                authorize_url: setup.endpoints.auth_url.clone(),
                scopes: vec!["email", "user_photos"],
                scope_separator: ",",
                extra: Vec::new(),
                pkce: false,
            },
            client_id: setup.app.key.clone(),
            token_max_age: SESSION_DAYS * 24 * 3600,
            supports_refresh: false,
        };
        Self {
            app: setup.app,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            cdn: deps.sources.clone(),
            info,
            page_size: deps.page_size.clamp(1, MAX_PAGE),
        }
    }

    fn url(&self, path: &str) -> String {
        self.endpoints.api(&format!("/{GRAPH_VERSION}{path}"))
    }

    /// A Graph request with the token and its `appsecret_proof`.
    fn graph(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.app.secret.as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(token.as_bytes());
        let proof: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.api
            .client()
            .request(method, self.url(path))
            .bearer_auth(token)
            .query(&[("appsecret_proof", proof)])
    }

    async fn get_json(
        &self,
        session: &Session,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Value, ProviderError> {
        let req = self
            .graph(Method::GET, path, &session.access_token)
            .query(query);
        self.api.json(req, graph_error).await
    }

    async fn username(&self, session: &Session) -> Result<Option<String>, ProviderError> {
        if session.username.is_some() {
            return Ok(session.username.clone());
        }
        let me = self
            .get_json(session, "/me", &[("fields", "name,email")])
            .await?;
        Ok(["email", "name"]
            .iter()
            .find_map(|k| me.get(*k).and_then(Value::as_str))
            .map(str::to_owned))
    }

    /// The photo's renditions' URLs, smallest first, checked against the egress policy.
    async fn images(&self, session: &Session, id: &str) -> Result<Vec<url::Url>, ProviderError> {
        if !items::valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid photo id".into()));
        }
        let photo = self
            .get_json(session, &format!("/{id}"), &[("fields", "images")])
            .await?;
        let all = items::renditions(&photo);
        if all.is_empty() {
            return Err(ProviderError::Unsupported(
                "Facebook offers no image for this id".into(),
            ));
        }
        all.into_iter()
            .map(|(_, src)| {
                self.cdn.check(src).map_err(|_| ProviderError::Status {
                    status: 400,
                    message: "URL not allowed".into(),
                })
            })
            .collect()
    }

    async fn fetch(&self, url: url::Url, from: u64) -> Result<reqwest::Response, ProviderError> {
        let mut req = self.cdn.client().get(url);
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        req.send().await.map_err(|e| {
            if crate::egress::is_refusal(&e) {
                ProviderError::Status {
                    status: 400,
                    message: "URL not allowed".into(),
                }
            } else {
                ProviderError::Unreachable(e.to_string())
            }
        })
    }
}

#[async_trait::async_trait]
impl Provider for Facebook {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    async fn exchange_code(
        &self,
        code: &str,
        redirect_uri: &str,
        _verifier: Option<&str>,
    ) -> Result<Session, ProviderError> {
        let token_url = self.url("/oauth/access_token");
        let endpoint = TokenEndpoint {
            api: &self.api,
            url: &token_url,
            app: &self.app,
            read: graph_error,
            client_auth: ClientAuth::Form,
        };
        let short = endpoint.exchange_code(code, redirect_uri, None).await?;
        let req = self.api.client().get(&token_url).query(&[
            ("grant_type", "fb_exchange_token"),
            ("client_id", self.app.key.as_str()),
            ("client_secret", self.app.secret.as_str()),
            ("fb_exchange_token", short.access_token.as_str()),
        ]);
        let long = api::token_answer(&self.api.json(req, graph_error).await?).ok_or_else(|| {
            ProviderError::Unreachable("exchange answer without access_token".into())
        })?;
        let mut session = Session {
            access_token: long.access_token,
            ..Session::default()
        };
        session.username = self.username(&session).await?;
        Ok(session)
    }

    async fn refresh(&self, _session: &Session) -> Result<Session, ProviderError> {
        // No refresh tokens: a dead token means signing in again.
        Err(ProviderError::Auth)
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        let req = self.graph(Method::DELETE, "/me/permissions", &session.access_token);
        let revoked = match self.api.json(req, graph_error).await {
            Ok(v) => v.get("success").and_then(Value::as_bool) == Some(true),
            Err(_) => false,
        };
        Ok(Revoked {
            revoked,
            manual_url: None,
        })
    }

    async fn list(
        &self,
        session: &Session,
        _ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        if !path.is_empty() && !items::valid_id(path) {
            return Err(ProviderError::BadRequest("Invalid album id".into()));
        }
        if cursor.is_some_and(|c| !items::valid_cursor(c)) {
            return Err(ProviderError::BadRequest("Invalid cursor".into()));
        }
        let limit = self.page_size.to_string();
        let (edge, fields) = if path.is_empty() {
            (
                "/me/albums".to_owned(),
                "name,cover_photo,created_time,type",
            )
        } else {
            (
                format!("/{path}/photos"),
                "icon,images,name,width,height,created_time",
            )
        };
        let mut query = vec![("fields", fields), ("limit", limit.as_str())];
        if let Some(c) = cursor {
            query.push(("after", c));
        }
        let page = self.get_json(session, &edge, &query).await?;
        let data = page
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        let listed = if path.is_empty() {
            data.filter_map(items::album_item).collect()
        } else {
            data.filter_map(items::photo_item).collect()
        };
        Ok(ListPage {
            username: self.username(session).await?,
            items: listed,
            next_page_path: items::next_page_path(&page, path),
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let largest = self
            .images(session, id)
            .await?
            .pop()
            .ok_or_else(|| ProviderError::Unsupported("no image".into()))?;
        let resp = self.fetch(largest, from).await?;
        if !resp.status().is_success() {
            let status = resp.status().as_u16();
            return Err(ProviderError::Status {
                status,
                message: format!("HTTP {status}: Facebook's image server refused the download"),
            });
        }
        let (size, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size,
            name: Some(format!("{id}.jpg")),
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        let smallest = self.images(session, id).await?.swap_remove(0);
        api::stream_image(self.fetch(smallest, 0).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_errors_map_to_auth_or_graph_messages() {
        assert!(matches!(
            graph_error(400, br#"{"error":{"message":"Session has expired","type":"OAuthException","code":190}}"#),
            ProviderError::Auth
        ));
        assert_eq!(
            graph_error(
                400,
                br#"{"error":{"message":"Unsupported get request.","code":100}}"#
            )
            .to_string(),
            "HTTP 400: Unsupported get request."
        );
    }
}
