//! Google Drive (`drive`, Drive API v3): sign-in, listing, downloads and thumbnails. The root
//! lists a virtual "Shared with me" folder and every shared drive (all pages) before the first
//! page of My Drive; folders come first, then names; thumbnails are proxied through
//! `/drive/thumbnail/{id}` because Google's links need credentials. `items` turns Google's JSON
//! into listed items; `export` says how Workspace files download.

mod export;
mod items;

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::RANGE;
use serde_json::Value;

use super::api::{self, Api};
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::oauth2::{self, ClientAuth, TokenEndpoint};
use super::{
    Deps, Download, Item, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo,
    REFRESHABLE_MAX_AGE, Revoked, Session,
};
use crate::egress::Egress;
use crate::transfer::source::ByteStream;

use export::{EXPORT_LIMIT_MESSAGE, export_type, unsupported_reason, with_extension};
pub use items::valid_id;
use items::{folder_item, str_of};

const FOLDER: &str = "application/vnd.google-apps.folder";
const SHORTCUT: &str = "application/vnd.google-apps.shortcut";
const WORKSPACE: &str = "application/vnd.google-apps.";
/// The virtual folder of files others shared with the user.
pub const SHARED_WITH_ME: &str = "shared-with-me";
const FILE_FIELDS: &str = "id,name,mimeType,size,modifiedTime,thumbnailLink,imageMediaMetadata,videoMediaMetadata,shortcutDetails(targetId,targetMimeType)";

/// Google's endpoints: `api_url` is the Drive API's host (`/drive/v3/...` is appended); the
/// revoke endpoint is `revoke` beside `token_url`.
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
        "https://www.googleapis.com",
    )
}

/// The Google Drive provider.
#[derive(Debug)]
pub struct Drive {
    app: OAuthApp,
    endpoints: Endpoints,
    api: Api,
    sources: Egress,
    info: ProviderInfo,
    page_size: u32,
}

impl Drive {
    /// Drive with `setup`'s app at its endpoints; `deps.sources` fetches URLs Google returns
    /// (thumbnail links) under the egress policy.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "drive",
            name: "Google Drive",
            root: "root",
            oauth: OAuthSpec {
                authorize_url: setup.endpoints.auth_url.clone(),
                scopes: vec!["https://www.googleapis.com/auth/drive.readonly"],
                scope_separator: " ",
                // A refresh token on every consent, not only the first one.
                extra: vec![("access_type", "offline"), ("prompt", "consent")],
                pkce: true,
            },
            client_id: setup.app.key.clone(),
            token_max_age: REFRESHABLE_MAX_AGE,
            supports_refresh: true,
        };
        Self {
            app: setup.app,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            sources: deps.sources.clone(),
            info,
            page_size: 1000,
        }
        .with_page_size(deps.page_size)
    }

    /// Items asked per `files.list` page (1..=1000).
    pub fn with_page_size(mut self, size: u32) -> Self {
        self.page_size = size.clamp(1, 1000);
        self
    }

    fn url(&self, path: &str) -> String {
        self.endpoints.api(&format!("/drive/v3{path}"))
    }

    async fn get_json(
        &self,
        session: &Session,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Value, ProviderError> {
        let req = self
            .api
            .get(self.url(path), &session.access_token)
            .query(query);
        self.api.json(req, google_error).await
    }

    async fn username(&self, session: &Session) -> Result<Option<String>, ProviderError> {
        if session.username.is_some() {
            return Ok(session.username.clone());
        }
        let about = self
            .get_json(session, "/about", &[("fields", "user")])
            .await?;
        Ok(about
            .pointer("/user/emailAddress")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    async fn metadata(&self, session: &Session, id: &str) -> Result<Value, ProviderError> {
        let path = format!("/files/{id}");
        let fields = "id,name,mimeType,size,thumbnailLink,shortcutDetails(targetId,targetMimeType)";
        let meta = self
            .get_json(
                session,
                &path,
                &[("fields", fields), ("supportsAllDrives", "true")],
            )
            .await?;
        if str_of(&meta, "mimeType") == Some(SHORTCUT) {
            let target = meta
                .pointer("/shortcutDetails/targetId")
                .and_then(Value::as_str)
                .filter(|t| valid_id(t))
                .ok_or_else(|| ProviderError::Unsupported("This shortcut has no target".into()))?;
            let path = format!("/files/{target}");
            return self
                .get_json(
                    session,
                    &path,
                    &[("fields", fields), ("supportsAllDrives", "true")],
                )
                .await;
        }
        Ok(meta)
    }

    fn token_endpoint(&self) -> TokenEndpoint<'_> {
        TokenEndpoint {
            api: &self.api,
            url: &self.endpoints.token_url,
            app: &self.app,
            read: google_error,
            client_auth: ClientAuth::Form,
        }
    }
}

#[async_trait::async_trait]
impl Provider for Drive {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn oauth2(&self) -> Option<TokenEndpoint<'_>> {
        Some(self.token_endpoint())
    }

    async fn signed_in(&self, mut session: Session) -> Result<Session, ProviderError> {
        session.username = self.username(&session).await?;
        Ok(session)
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        let req = self
            .api
            .client()
            .post(self.endpoints.revoke_url())
            .form(&[("token", session.access_token.as_str())]);
        let revoked = self.api.send(req, google_error).await.is_ok();
        Ok(Revoked {
            revoked,
            manual_url: None,
        })
    }

    async fn list(
        &self,
        session: &Session,
        ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        let path = if path.is_empty() { "root" } else { path };
        if !valid_id(path) {
            return Err(ProviderError::BadRequest("Invalid folder id".into()));
        }
        let q = if path == SHARED_WITH_ME {
            "sharedWithMe and trashed=false".to_owned()
        } else {
            format!("'{path}' in parents and trashed=false")
        };
        let mut items = Vec::new();
        if path == "root" && cursor.is_none() {
            items.push(folder_item(
                SHARED_WITH_ME,
                "Shared with me",
                BTreeMap::new(),
            ));
            items.extend(self.shared_drives(session).await?);
        }
        let page_size = self.page_size.to_string();
        let fields = format!("nextPageToken,files({FILE_FIELDS})");
        let mut query = vec![
            ("q", q.as_str()),
            ("fields", fields.as_str()),
            ("pageSize", page_size.as_str()),
            ("orderBy", "folder,name"),
            ("includeItemsFromAllDrives", "true"),
            ("supportsAllDrives", "true"),
        ];
        if let Some(c) = cursor {
            query.push(("pageToken", c));
        }
        let page = self.get_json(session, "/files", &query).await?;
        let files = page.get("files").and_then(Value::as_array);
        let mut listed: Vec<Item> = files
            .into_iter()
            .flatten()
            .filter_map(|f| self.item(ctx, f))
            .collect();
        // Shortcuts to folders are files to the API's ordering: folders first again (stable).
        listed.sort_by_key(|i| !i.is_folder);
        items.extend(listed);
        let next_page_path = page
            .get("nextPageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(|t| format!("{path}?cursor={}", utf8_percent_encode(t, NON_ALPHANUMERIC)));
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
        if !valid_id(id) || id == "root" || id == SHARED_WITH_ME {
            return Err(ProviderError::BadRequest("Invalid file id".into()));
        }
        let meta = self.metadata(session, id).await?;
        let id = str_of(&meta, "id").filter(|i| valid_id(i)).unwrap_or(id);
        let mime = str_of(&meta, "mimeType").unwrap_or("");
        let name = str_of(&meta, "name").unwrap_or("file");
        if mime == FOLDER {
            return Err(ProviderError::Unsupported(
                "A folder cannot be downloaded; open it and pick its files".into(),
            ));
        }
        let (resp, name, size_hint) = if mime.starts_with(WORKSPACE) {
            let (export, ext) = export_type(mime)
                .ok_or_else(|| ProviderError::Unsupported(unsupported_reason(mime)))?;
            let req = self
                .api
                .client()
                .get(self.url(&format!("/files/{id}/export")))
                .query(&[("mimeType", export), ("supportsAllDrives", "true")])
                .bearer_auth(&session.access_token);
            (
                self.api.send(req, google_error).await?,
                with_extension(name, ext),
                None,
            )
        } else {
            let mut req = self
                .api
                .client()
                .get(self.url(&format!("/files/{id}")))
                .query(&[("alt", "media"), ("supportsAllDrives", "true")])
                .bearer_auth(&session.access_token);
            if from > 0 {
                req = req.header(RANGE, format!("bytes={from}-"));
            }
            let size = meta
                .get("size")
                .and_then(|s| s.as_str().and_then(|s| s.parse().ok()));
            (
                self.api.send(req, google_error).await?,
                name.to_owned(),
                size,
            )
        };
        let (total, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size: total.or(size_hint),
            name: Some(name),
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        if !valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid file id".into()));
        }
        let meta = self.metadata(session, id).await?;
        let link = str_of(&meta, "thumbnailLink").ok_or_else(|| ProviderError::Status {
            status: 404,
            message: "This file has no thumbnail".into(),
        })?;
        // A URL the provider returned: held to the same egress rules as a link import.
        let url = self
            .sources
            .check(link)
            .map_err(|_| ProviderError::Status {
                status: 400,
                message: "URL not allowed".into(),
            })?;
        let mut req = self.sources.client().get(url.clone());
        // Google's thumbnail links need the user's credentials unless the file is public; never
        // send them anywhere but Google's hosts (or the configured API host).
        let api_host = url::Url::parse(&self.endpoints.api_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned));
        let host = url.host_str().unwrap_or("");
        if host.ends_with(".googleusercontent.com") || Some(host) == api_host.as_deref() {
            req = req.bearer_auth(&session.access_token);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ProviderError::Unreachable(e.to_string()))?;
        api::stream_image(resp)
    }
}

/// Google's errors: 401 and `invalid_grant` are auth errors; the export cap gets a readable
/// message; everything else carries Google's message.
fn google_error(status: u16, body: &[u8]) -> ProviderError {
    match oauth2::token_error(status, body) {
        ProviderError::Status { .. }
            if String::from_utf8_lossy(body).contains("exportSizeLimitExceeded") =>
        {
            ProviderError::Status {
                status,
                message: EXPORT_LIMIT_MESSAGE.into(),
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_errors_map_to_auth_or_readable_messages() {
        assert!(matches!(google_error(401, b"{}"), ProviderError::Auth));
        assert!(matches!(
            google_error(400, br#"{"error":"invalid_grant"}"#),
            ProviderError::Auth
        ));
        let e = google_error(
            403,
            br#"{"error":{"errors":[{"reason":"exportSizeLimitExceeded"}],"message":"x"}}"#,
        );
        assert_eq!(e.to_string(), EXPORT_LIMIT_MESSAGE);
    }
}
