//! OneDrive and SharePoint (`onedrive`, Microsoft Graph v1.0, identity platform v2.0), on
//! Companion's routes so `@uppy/onedrive` works unchanged. The top level is the person's own
//! OneDrive with, on its first page, "Shared with me", "SharePoint sites" (each site's document
//! libraries; Companion has none, uppy#3837) and the person's other drives; folders page by
//! `@odata.nextLink`'s `$skiptoken`; files download through Graph's content redirect (resumed
//! with `Range`). A refused access token is refreshed on the server once, shared by every
//! request that finds it expired (a 5,000-file batch keeps going, uppy#5995), through the same
//! [`Rotation`](super::rotation::Rotation) ledger as Box, since Microsoft returns a new refresh token on each refresh.

mod items;

use serde_json::Value;

use super::api::{self, Answer};
use super::config::{Endpoints, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::rotating::{RotatingApi, RotatingSpec};
use super::{
    Deps, Download, Item, ListCtx, ListPage, Provider, ProviderError, ProviderInfo, Revoked,
    Session,
};
use crate::transfer::source::ByteStream;

use items::{Place, SHARED, SITES};

/// Microsoft's endpoints: `api_url` is Graph's host (`/v1.0/...` is appended).
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
        "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        "https://graph.microsoft.com",
    )
}

/// The OneDrive / SharePoint provider.
#[derive(Debug)]
pub struct OneDrive {
    oauth: RotatingApi,
}

impl OneDrive {
    /// OneDrive with `setup`'s app at its endpoints; `deps.sources` fetches the download URLs
    /// Graph redirects to.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let spec = RotatingSpec {
            id: "onedrive",
            name: "OneDrive",
            root: "root",
            scopes: vec![
                "offline_access",
                "User.Read",
                "Files.Read.All",
                "Sites.Read.All",
            ],
            pkce: true,
            // Microsoft's refresh tokens last 90 days (sliding).
            session_days: 90,
            max_page: 999,
            prefix: "/v1.0",
            read: graph_error,
            token_read: graph_error,
            client_auth: ClientAuth::Form,
        };
        Self {
            oauth: RotatingApi::new(setup, deps, spec),
        }
    }

    async fn username(&self, session: &Session) -> Result<Option<String>, ProviderError> {
        if session.username.is_some() {
            return Ok(session.username.clone());
        }
        let me = self.oauth.get_json(session, "/me", &[]).await?;
        Ok(["mail", "userPrincipalName"]
            .iter()
            .find_map(|k| me.get(*k).and_then(Value::as_str))
            .map(str::to_owned))
    }

    /// Every value of a collection (sites, libraries, drives), following `@odata.nextLink`s
    /// on Graph's host only.
    async fn all(
        &self,
        session: &Session,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<Value>, ProviderError> {
        let mut out = Vec::new();
        let mut page = self.oauth.get_json(session, path, query).await?;
        for _ in 0..50 {
            out.extend(
                page.get("value")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
            let Some(next) = page.get("@odata.nextLink").and_then(Value::as_str) else {
                break;
            };
            let Some(rest) = next.strip_prefix(&self.oauth.url("")) else {
                break;
            };
            let rest = rest.to_owned();
            page = self.oauth.get_json(session, &rest, &[]).await?;
        }
        Ok(out)
    }

    /// The first page's virtual folders and the person's other drives.
    async fn places(&self, session: &Session) -> Result<Vec<Item>, ProviderError> {
        let mut out = vec![
            items::folder(SHARED, "Shared with me", "shared"),
            items::folder(SITES, "SharePoint sites", "sites"),
        ];
        let own = self
            .oauth
            .get_json(session, "/me/drive", &[("$select", "id")])
            .await?;
        let own = own
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        for d in self.all(session, "/me/drives", &[]).await? {
            if let (Some(id), Some(name)) = (
                d.get("id").and_then(Value::as_str),
                d.get("name").and_then(Value::as_str),
            ) {
                if id != own && items::place(&format!("{id}~root")).is_ok() {
                    out.push(items::folder(&format!("{id}~root"), name, "drive"));
                }
            }
        }
        Ok(out)
    }

    async fn children(
        &self,
        session: &Session,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<Value, ProviderError> {
        let top = self.oauth.page_size.to_string();
        let mut query = vec![("$top", top.as_str()), ("$expand", "thumbnails")];
        if let Some(c) = cursor {
            query.push(("$skiptoken", c));
        }
        self.oauth.get_json(session, path, &query).await
    }

    async fn list_sites(&self, session: &Session) -> Result<Vec<Item>, ProviderError> {
        let sites = self.all(session, "/sites", &[("search", "*")]).await?;
        Ok(sites
            .iter()
            .filter_map(|s| {
                let id = s.get("id").and_then(Value::as_str)?;
                let name = s
                    .get("displayName")
                    .or_else(|| s.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or(id);
                let path = format!("site~{id}");
                items::place(&path).ok()?;
                Some(items::folder(&path, name, "site"))
            })
            .collect())
    }

    async fn list_libraries(
        &self,
        session: &Session,
        site: &str,
    ) -> Result<Vec<Item>, ProviderError> {
        let drives = self
            .all(session, &format!("/sites/{site}/drives"), &[])
            .await?;
        Ok(drives
            .iter()
            .filter_map(|d| {
                let id = d.get("id").and_then(Value::as_str)?;
                let name = d.get("name").and_then(Value::as_str).unwrap_or(id);
                let path = format!("{id}~root");
                items::place(&path).ok()?;
                Some(items::folder(&path, name, "library"))
            })
            .collect())
    }
}

#[async_trait::async_trait]
impl Provider for OneDrive {
    fn info(&self) -> &ProviderInfo {
        &self.oauth.info
    }

    fn oauth2(&self) -> Option<TokenEndpoint<'_>> {
        Some(self.oauth.token_endpoint())
    }

    async fn signed_in(&self, mut session: Session) -> Result<Session, ProviderError> {
        session.username = self.username(&session).await?;
        Ok(session)
    }

    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        self.oauth.refresh(session).await
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        // Microsoft has no revocation endpoint for a single app's tokens.
        self.oauth.rotation.forget(session);
        Ok(Revoked {
            revoked: false,
            manual_url: Some("https://account.live.com/consent/Manage"),
        })
    }

    async fn list(
        &self,
        session: &Session,
        _ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        let place = items::place(path)?;
        let mut listed = Vec::new();
        let page = match place {
            Place::Home => {
                if cursor.is_none() {
                    listed.extend(self.places(session).await?);
                }
                Some(
                    self.children(session, "/me/drive/root/children", cursor)
                        .await?,
                )
            }
            Place::Shared => Some(
                self.children(session, "/me/drive/sharedWithMe", cursor)
                    .await?,
            ),
            Place::Sites => {
                listed.extend(self.list_sites(session).await?);
                None
            }
            Place::Site(site) => {
                listed.extend(self.list_libraries(session, site).await?);
                None
            }
            Place::Folder { drive, item } => {
                let at = if item == "root" {
                    format!("/drives/{drive}/root/children")
                } else {
                    format!("/drives/{drive}/items/{item}/children")
                };
                Some(self.children(session, &at, cursor).await?)
            }
        };
        let mut next_page_path = None;
        if let Some(page) = page {
            let mut found: Vec<Item> = page
                .get("value")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(items::item)
                .collect();
            found.sort_by_key(|i| !i.is_folder);
            listed.extend(found);
            next_page_path = items::next_page_path(path, &page);
        }
        Ok(ListPage {
            username: self.username(session).await?,
            items: listed,
            next_page_path,
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let (drive, item) = items::file(id)?;
        let meta = self
            .oauth
            .get_json(
                session,
                &format!("/drives/{drive}/items/{item}"),
                &[("$select", "name,size,file,folder")],
            )
            .await?;
        if meta.get("folder").is_some() {
            return Err(ProviderError::Unsupported(
                "A folder cannot be downloaded; open it and pick its files".into(),
            ));
        }
        let content = format!("/drives/{drive}/items/{item}/content");
        let resp = match self.oauth.answer(session, &content, &[]).await? {
            // The download host throttles too (SharePoint's 503 or 429 with `Retry-After`):
            // waited out as Graph's own limits are, not failed at once.
            Answer::Moved(location) => {
                self.oauth
                    .download_presigned(&location, from, download_host_error)
                    .await?
            }
            Answer::Body(resp) => resp,
        };
        if !resp.status().is_success() {
            return Err(download_host_error(resp.status().as_u16(), &[]));
        }
        let (total, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            size: total.or_else(|| meta.get("size").and_then(Value::as_u64)),
            name: meta.get("name").and_then(Value::as_str).map(str::to_owned),
            stream: api::byte_stream(resp),
            skip,
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        let (drive, item) = items::file(id)?;
        let meta = self
            .oauth
            .get_json(
                session,
                &format!("/drives/{drive}/items/{item}"),
                &[("$expand", "thumbnails"), ("$select", "id,thumbnails")],
            )
            .await?;
        let link = meta
            .pointer("/thumbnails/0/medium/url")
            .and_then(Value::as_str)
            .ok_or_else(|| ProviderError::Status {
                status: 404,
                message: "This file has no thumbnail".into(),
            })?;
        let resp = self.oauth.fetch_presigned(link, 0).await?;
        api::stream_image(resp)
    }
}

/// The download host's refusals (an expired pre-authenticated link, a range it cannot serve):
/// its status, without its body (not Graph's JSON).
fn download_host_error(status: u16, _body: &[u8]) -> ProviderError {
    ProviderError::Status {
        status,
        message: "OneDrive did not send the file".into(),
    }
}

/// Graph's errors: 401 and `invalid_grant` are auth errors; 400/403 carry Graph's message
/// (`Tenant does not have a SPO license`); the rest too.
fn graph_error(status: u16, body: &[u8]) -> ProviderError {
    let text = String::from_utf8_lossy(body);
    if status == 401 || (status == 400 && text.contains("invalid_grant")) {
        return ProviderError::Auth;
    }
    ProviderError::Status {
        status,
        message: api::error_message(body, status),
    }
}
