//! WebDAV (RFC 4918): Nextcloud, ownCloud, or any WebDAV server, on Companion's routes so the
//! released `@uppy/webdav` works unchanged. No OAuth: the person types the server URL (a
//! public share link, or a collection URL with `user:app-password@` in it) into Uppy's form,
//! which posts it to `POST /webdav/simple-auth` (Companion's "simple auth"); Ferry checks it
//! with a `PROPFIND` (`Depth: 0`) and seals the collection and the credentials in the Uppy auth
//! token. Listing is `PROPFIND` (`Depth: 1`), imports are `GET` (with `Range` when resuming).
//!
//! Every request goes through the egress-policed client, like a link import. Ids are paths in
//! the collection (`/Photos/a.jpg`, percent-encoded once as Companion does), checked so none
//! leaves it.
//!
//! Where Companion differs: its 6.x TypeScript port lists the root for every folder (it reads
//! `?directory=`, which Uppy never sends); Ferry lists the folder asked for. Companion keeps
//! only `webdavUrl` in its token and cannot sign in with a password; Ferry keeps the
//! credentials beside it, sealed.
//!
//! # Layout
//!
//! - [`target`]: the typed URL as a collection plus credentials; item paths.
//! - [`http`]: requests through the egress client, rate limits, status mapping.
//! - [`multistatus`]: the PROPFIND body and its bounded parser.
//! - [`items`]: multistatus entries as Companion's list items.

pub mod http;
pub mod items;
pub mod multistatus;
pub mod target;

use reqwest::header::{CONTENT_TYPE, RANGE};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use url::Url;

use self::http::Http;
use self::multistatus::{Entry, MAX_BODY, PROPFIND_BODY};
use self::target::Target;
use super::config::ProviderSetup;
use super::{
    Deps, Download, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo, Revoked,
    Session, api,
};
use crate::transfer::source::ByteStream;

/// The access token of a session that sends no credentials.
const ANONYMOUS: &str = "anonymous";
/// Companion's lifetime of a simple-auth token (its `authStateExpiry`): a day.
const TOKEN_MAX_AGE: i64 = 24 * 3600;

/// The WebDAV provider.
#[derive(Debug)]
pub struct WebDav {
    info: ProviderInfo,
    http: Http,
}

impl WebDav {
    /// WebDAV needs no app: `setup` only enables it; requests use `deps.sources`.
    pub fn new(_setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "webdav",
            name: "WebDAV",
            root: "",
            // No OAuth: the login routes refuse this provider (see `has_simple_auth`).
            oauth: OAuthSpec {
                authorize_url: String::new(),
                scopes: Vec::new(),
                scope_separator: " ",
                extra: Vec::new(),
                pkce: false,
            },
            client_id: String::new(),
            token_max_age: TOKEN_MAX_AGE,
            supports_refresh: false,
        };
        Self {
            info,
            http: Http::new(deps.sources.clone(), deps.api.limits()),
        }
    }

    /// `PROPFIND` of `url` at `depth`: the entries, from a body of at most [`MAX_BODY`].
    async fn propfind(
        &self,
        target: &Target,
        url: &Url,
        depth: &str,
    ) -> Result<Vec<Entry>, ProviderError> {
        let method = Method::from_bytes(b"PROPFIND").map_err(|_| unreadable("bad method"))?;
        let req = self
            .http
            .request(target, method, url)?
            .header("Depth", depth)
            .header(CONTENT_TYPE, "application/xml; charset=utf-8")
            .body(PROPFIND_BODY);
        let mut resp = self.http.send(req).await?;
        if resp.status() != StatusCode::MULTI_STATUS {
            return Err(unreadable("The server did not answer as a WebDAV server"));
        }
        if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| ProviderError::Unreachable(e.to_string()))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        let text =
            std::str::from_utf8(&body).map_err(|_| unreadable("The WebDAV answer is not UTF-8"))?;
        multistatus::parse(text).map_err(|e| unreadable(&e.to_string()))
    }
}

fn unreadable(message: &str) -> ProviderError {
    ProviderError::Status {
        status: 502,
        message: message.to_owned(),
    }
}

fn too_large() -> ProviderError {
    unreadable(&format!(
        "The WebDAV folder listing is larger than {} MiB",
        MAX_BODY / (1024 * 1024)
    ))
}

/// The session of a signed-in `target`: Companion's `webdavUrl`, the `Authorization` value as
/// the access token (sealed with the rest), and who is signed in as the username.
fn session_of(target: &Target) -> Session {
    let mut session = Session {
        access_token: target
            .authorization
            .clone()
            .unwrap_or_else(|| ANONYMOUS.into()),
        username: Some(target.label.clone()),
        ..Session::default()
    };
    session
        .extra
        .insert("webdavUrl".into(), json!(target.base.as_str()));
    session
}

/// The target a session names; a session without one must sign in again.
fn target_of(session: &Session) -> Result<Target, ProviderError> {
    let base = session
        .extra
        .get("webdavUrl")
        .and_then(Value::as_str)
        .and_then(|u| Url::parse(u).ok())
        .ok_or(ProviderError::Auth)?;
    let authorization = Some(session.access_token.clone()).filter(|a| a != ANONYMOUS);
    let label = session
        .username
        .clone()
        .unwrap_or_else(|| base.host_str().unwrap_or_default().to_owned());
    Ok(Target {
        base,
        authorization,
        label,
    })
}

/// A string field of the sign-in form.
fn field<'a>(form: &'a Value, name: &str) -> Option<&'a str> {
    form.get(name).and_then(Value::as_str)
}

#[async_trait::async_trait]
impl Provider for WebDav {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn has_simple_auth(&self) -> bool {
        true
    }

    /// Uppy's form sends `{"webdavUrl"}`; Ferry also takes `username` and `password` fields.
    async fn simple_auth(&self, form: &Value) -> Result<Session, ProviderError> {
        let url = field(form, "webdavUrl")
            .ok_or_else(|| ProviderError::BadRequest("Missing webdavUrl".into()))?;
        let target = Target::parse(url, field(form, "username"), field(form, "password"))?;
        let entries = self
            .propfind(&target, &target.base, "0")
            .await
            .map_err(|e| match e {
                ProviderError::Auth => ProviderError::BadRequest(
                    "The WebDAV server refused the username or password".into(),
                ),
                ProviderError::Unreachable(cause) => {
                    tracing::info!(%cause, "WebDAV server unreachable at sign-in");
                    ProviderError::BadRequest("Cannot connect to the WebDAV server".into())
                }
                other => other,
            })?;
        if !entries.first().is_some_and(|e| e.is_folder) {
            return Err(ProviderError::BadRequest(
                "The WebDAV URL does not name a folder".into(),
            ));
        }
        Ok(session_of(&target))
    }

    /// Nothing to revoke at the server: the client drops its token (Companion answers the same).
    async fn revoke(&self, _session: &Session) -> Result<Revoked, ProviderError> {
        Ok(Revoked {
            revoked: true,
            manual_url: None,
        })
    }

    /// The whole folder in one page: PROPFIND has no paging.
    async fn list(
        &self,
        session: &Session,
        _ctx: &ListCtx,
        path: &str,
        _cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        let target = target_of(session)?;
        let url = target.url_of(path, true)?;
        let entries = self.propfind(&target, &url, "1").await?;
        let dir = target::segments(path)?;
        Ok(ListPage {
            username: Some(target.label.clone()),
            items: items::from_entries(&url, &dir, entries),
            next_page_path: None,
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let target = target_of(session)?;
        let segments = target::segments(id)?;
        let Some(name) = segments.last().map(|s| (*s).to_owned()) else {
            return Err(ProviderError::BadRequest("Invalid WebDAV path".into()));
        };
        let url = target.url_of(id, false)?;
        let mut req = self.http.request(&target, Method::GET, &url)?;
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        let resp = self.http.send(req).await?;
        let (size, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size,
            name: Some(name),
        })
    }

    async fn thumbnail(
        &self,
        _session: &Session,
        _id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        Err(ProviderError::Unsupported(
            "WebDAV files have no thumbnails".into(),
        ))
    }
}
