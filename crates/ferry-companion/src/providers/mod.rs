//! Cloud providers (Google Drive, Instagram, Box, Dropbox, OneDrive, Zoom, Facebook) behind one [`Provider`]
//! trait, served on
//! Companion's paths so released Uppy provider plugins work unchanged.
//!
//! A provider knows its OAuth endpoints and scopes, how to swap a code for a session, refresh
//! and revoke it, list a folder in Companion's item shape, open a file for download from any
//! byte, and fetch a thumbnail. Everything else (the OAuth dance, sealed tokens, the routes,
//! the transfer of a download to a destination) is shared: a provider describes itself as a
//! [`ProviderInfo`] value, and the standard OAuth2 forms and the thumbnail stream-back are
//! helpers ([`oauth2`], [`api`]). Adding a provider is one file (or folder) implementing
//! [`Provider`], one line in the registry table of [`Providers::from_config`], and a fake.
//!
//! # Layout
//!
//! - [`config`]: [`ProvidersConfig`] (app keys, endpoint overrides, paging and backoff).
//! - [`api`]: the shared API client: bearer requests, rate limits waited out, error mapping,
//!   downloads and thumbnails streamed back.
//! - [`ratelimit`]: what a rate limit is, the wait it asks (`Retry-After`), the caps.
//! - [`oauth2`]: the consent-page spec, the OAuth2 authorization-code and refresh-token forms.
//! - [`drive`], [`instagram`], [`r#box`], [`unsplash`], [`dropbox`], [`onedrive`], [`zoom`],
//!   [`facebook`], [`webdav`]: the providers.
//! - [`google_picker`]: Google Drive Picker and Photos Picker imports (`/google-picker/get`),
//!   no sign-in here: the page's own token downloads what was picked.
//! - [`simple_auth`]: `POST /{p}/simple-auth`, sign-in with a form (WebDAV).
//! - [`rotation`]: one refresh at a time per session, and the newest tokens of a rotated one.
//! - [`rotating`]: the calls Box, OneDrive and Zoom (one-use refresh tokens) share, over
//!   [`rotation`].
//! - [`search`]: search providers' routes and answers (`/search/{p}/list`, `/search/{p}/get`).
//! - [`find`]: search inside a signed-in account (`/{p}/search`, Dropbox).
//! - [`session`]: the provider session sealed in the Uppy auth token.
//! - [`source`]: a provider download as a transfer [`crate::transfer::Source`].
//! - [`routes`]: `/{p}/list`, `/{p}/get`, `/{p}/logout`, `/{p}/refresh-token`,
//!   `/{p}/thumbnail`, and `GET /providers` (which providers are enabled).

pub mod api;
pub mod r#box;
pub mod config;
pub mod drive;
pub mod dropbox;
pub mod facebook;
pub mod find;
pub mod google_picker;
pub mod instagram;
pub mod oauth2;
pub mod onedrive;
pub mod ratelimit;
pub mod rotating;
pub mod rotation;
pub mod routes;
pub mod search;
pub mod session;
pub mod simple_auth;
pub mod source;
pub mod unsplash;
pub mod webdav;
pub mod zoom;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use config::ProvidersConfig;
pub use oauth2::OAuthSpec;
pub use session::Session;

use crate::egress::Egress;
use crate::error::CompanionError;
use crate::transfer::source::ByteStream;

/// How a provider call failed. Mapped to Companion's statuses by [`CompanionError::from`].
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider refused the access token (expired, revoked) or the refresh token.
    #[error("HTTP 401: invalid access token detected by Provider")]
    Auth,
    /// The request names something malformed (an id with path tricks, an unknown folder).
    #[error("{0}")]
    BadRequest(String),
    /// The file exists but has no downloadable form (a Google Form, a folder).
    #[error("{0}")]
    Unsupported(String),
    /// The provider answered this status; `message` is safe to show.
    #[error("{message}")]
    Status { status: u16, message: String },
    /// The provider could not be reached or broke off.
    #[error("could not reach the provider")]
    Unreachable(String),
    /// The provider still limits requests after the waits allowed, or asks for a longer one;
    /// it can be asked again in `retry_after` seconds.
    #[error("The provider is limiting requests; retrying in {retry_after} s")]
    RateLimited { retry_after: u64 },
}

impl ProviderError {
    /// This error as a route answers it for `provider`: a rate limit names the provider.
    pub fn for_route(self, provider: &dyn Provider) -> CompanionError {
        match self {
            Self::RateLimited { retry_after } => CompanionError::RateLimited {
                message: format!(
                    "{} is limiting requests; retrying in {retry_after} s",
                    provider.info().name
                ),
                retry_after,
            },
            other => other.into(),
        }
    }
}

impl From<ProviderError> for CompanionError {
    fn from(e: ProviderError) -> Self {
        match e {
            ProviderError::Auth => CompanionError::ProviderUnauthorized,
            ProviderError::BadRequest(m) | ProviderError::Unsupported(m) => {
                CompanionError::BadRequest(m)
            }
            ProviderError::Status { status, message } => {
                CompanionError::Provider { status, message }
            }
            ProviderError::RateLimited { retry_after } => CompanionError::RateLimited {
                message: format!("The provider is limiting requests; retrying in {retry_after} s"),
                retry_after,
            },
            ProviderError::Unreachable(cause) => {
                tracing::info!(%cause, "provider unreachable");
                CompanionError::Provider {
                    status: 502,
                    message: "Could not reach the provider".into(),
                }
            }
        }
    }
}

/// One entry of a list answer, in Companion's shape (`ProviderListItem`).
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub is_folder: bool,
    pub icon: Option<String>,
    pub id: String,
    pub name: String,
    pub request_path: String,
    pub modified_date: Option<String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub thumbnail: Option<String>,
    /// Provider-specific fields (Instagram's media kind, ...).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Option<Object>)]
    pub custom: BTreeMap<&'static str, Value>,
}

/// One page of a folder: its items and the path of the next page (`None`: the last page).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListPage {
    pub username: Option<String>,
    pub items: Vec<Item>,
    pub next_page_path: Option<String>,
}

/// The answer of a logout.
#[derive(Debug)]
pub struct Revoked {
    pub revoked: bool,
    /// Where the user can revoke access by hand when the provider has no revoke call.
    pub manual_url: Option<&'static str>,
}

/// A file opened for download from some byte.
pub struct Download {
    pub stream: ByteStream,
    /// Leading bytes to discard (the provider sent the file from its start).
    pub skip: u64,
    /// The file's full length, when known.
    pub size: Option<u64>,
    /// The file's name (with the export extension for converted documents).
    pub name: Option<String>,
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("skip", &self.skip)
            .field("size", &self.size)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What an id keeps unescaped in a thumbnail link: RFC 3986's unreserved characters.
const ID_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Per-request context of a list: how to build this server's thumbnail links.
pub struct ListCtx {
    /// `{public base}/{p}/thumbnail/`.
    pub thumbnail_base: String,
    /// The `t` query value for a file: a short-lived sealed grant for that file alone, so a
    /// plain `<img>` loads its thumbnail and nothing else.
    pub grant: Box<dyn Fn(&str) -> String + Send + Sync>,
}

impl std::fmt::Debug for ListCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListCtx")
            .field("thumbnail_base", &self.thumbnail_base)
            .finish_non_exhaustive()
    }
}

impl ListCtx {
    /// This server's thumbnail URL for `id`.
    pub fn thumbnail(&self, id: &str) -> String {
        let t = (self.grant)(id);
        // Ids that are paths (Dropbox's) stay one segment; plain ids are unchanged.
        let id = percent_encoding::utf8_percent_encode(id, ID_SEGMENT);
        format!("{}{id}?t={t}", self.thumbnail_base)
    }
}

/// What a provider is, as plain data: everything about it that is not a call.
#[derive(Clone, Debug)]
pub struct ProviderInfo {
    /// The provider id in paths and tokens (`drive`).
    pub id: &'static str,
    /// A human name (`Google Drive`).
    pub name: &'static str,
    /// The folder a client lists first (`root`, `recent`).
    pub root: &'static str,
    /// Authorize endpoint, scopes, PKCE support.
    pub oauth: OAuthSpec,
    /// The app's client id (public; sent in the authorize URL).
    pub client_id: String,
    /// Lifetime of the Uppy auth token, in seconds.
    pub token_max_age: i64,
    /// Whether `/refresh-token` can renew a session of this provider.
    pub supports_refresh: bool,
}

/// Companion's MAX_AGE_REFRESH_TOKEN (400 days): the Uppy auth token's lifetime for providers
/// whose sessions carry a refresh token.
pub const REFRESHABLE_MAX_AGE: i64 = 400 * 24 * 3600;

/// A cloud provider.
#[async_trait::async_trait]
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// Its id, name, root folder, OAuth settings and token lifetime.
    fn info(&self) -> &ProviderInfo;

    /// Whether people sign in to it. A search provider (Unsplash) answers `false`: the server
    /// holds its key, the OAuth routes refuse it and `/search/{p}/...` serves it.
    fn needs_sign_in(&self) -> bool {
        true
    }

    /// Page `page` (from 1) of the results for `query`, for search providers.
    async fn search(
        &self,
        _query: &str,
        _page: u32,
    ) -> Result<search::SearchResults, ProviderError> {
        Err(ProviderError::BadRequest(
            "This provider has no search".into(),
        ))
    }

    /// Whether people sign in with a form ([`Provider::simple_auth`], Companion's "simple
    /// auth": WebDAV's server URL) instead of OAuth; the OAuth routes refuse such a provider.
    fn has_simple_auth(&self) -> bool {
        false
    }

    /// The session for a sign-in form (`form` of `POST /{p}/simple-auth`).
    async fn simple_auth(&self, _form: &Value) -> Result<Session, ProviderError> {
        Err(ProviderError::BadRequest(
            "This provider signs in through OAuth".into(),
        ))
    }

    /// The provider's standard OAuth2 token endpoint, which the default [`exchange_code`] and
    /// [`refresh`] use. `None` (the default): the provider overrides both.
    ///
    /// [`exchange_code`]: Provider::exchange_code
    /// [`refresh`]: Provider::refresh
    fn oauth2(&self) -> Option<oauth2::TokenEndpoint<'_>> {
        None
    }

    /// Completes a session fresh from the code swap: its username, and whatever the provider
    /// caches in [`Session::extra`].
    async fn signed_in(&self, session: Session) -> Result<Session, ProviderError> {
        Ok(session)
    }

    /// Files matching `query` in the signed-in account, under the folder `path` (a
    /// `requestPath`) or everywhere, one page from `cursor`, in the list shape (`/{p}/search`).
    async fn search_files(
        &self,
        _session: &Session,
        _ctx: &ListCtx,
        _query: &str,
        _path: Option<&str>,
        _cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        Err(ProviderError::BadRequest(
            "This provider has no search".into(),
        ))
    }

    /// Swaps an authorization code for a session through [`Provider::oauth2`], then
    /// [`Provider::signed_in`] fills it in.
    async fn exchange_code(
        &self,
        code: &str,
        redirect_uri: &str,
        verifier: Option<&str>,
    ) -> Result<Session, ProviderError> {
        let Some(endpoint) = self.oauth2() else {
            return Err(ProviderError::BadRequest(format!(
                "{} has no sign-in",
                self.info().name
            )));
        };
        let session = endpoint
            .session_from_code(code, redirect_uri, verifier)
            .await?;
        self.signed_in(session).await
    }

    /// A session with a fresh access token (and the new refresh token if the provider rotated
    /// it), through [`Provider::oauth2`]. [`ProviderError::Auth`] when the refresh is refused.
    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        match self.oauth2() {
            Some(endpoint) => endpoint.refresh(session).await,
            None => Err(ProviderError::Auth),
        }
    }

    /// Revokes the session at the provider, where it can.
    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError>;

    /// One page of the folder `path` (`requestPath` of a folder, or the root), from `cursor`.
    async fn list(
        &self,
        session: &Session,
        ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError>;

    /// Opens the file `id` (`requestPath` of a file) at byte `from`.
    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError>;

    /// The thumbnail image of `id`: its content type and bytes.
    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError>;
}

/// What a provider's constructor gets besides its own setup.
#[derive(Clone, Debug)]
pub struct Deps {
    /// The client for the provider's configured endpoints.
    pub api: api::Api,
    /// The egress-policed client, for URLs the provider returns (CDN links).
    pub sources: Egress,
    /// Items asked per page (each provider clamps it to its API's limit).
    pub page_size: u32,
}

/// Builds an enabled provider from its setup.
type Build = fn(config::ProviderSetup, &Deps) -> Arc<dyn Provider>;

/// Every provider Ferry has: its id in [`ProvidersConfig::enabled`] and its constructor.
const REGISTRY: &[(&str, Build)] = &[
    ("drive", |s, d| Arc::new(drive::Drive::new(s, d))),
    ("instagram", |s, d| {
        Arc::new(instagram::Instagram::new(s, d))
    }),
    ("box", |s, d| Arc::new(r#box::BoxCloud::new(s, d))),
    ("unsplash", |s, d| Arc::new(unsplash::Unsplash::new(s, d))),
    ("dropbox", |s, d| Arc::new(dropbox::Dropbox::new(s, d))),
    ("onedrive", |s, d| Arc::new(onedrive::OneDrive::new(s, d))),
    ("zoom", |s, d| Arc::new(zoom::Zoom::new(s, d))),
    ("facebook", |s, d| Arc::new(facebook::Facebook::new(s, d))),
    ("webdav", |s, d| Arc::new(webdav::WebDav::new(s, d))),
];

/// The enabled providers, by id.
#[derive(Clone, Debug, Default)]
pub struct Providers {
    map: BTreeMap<&'static str, Arc<dyn Provider>>,
}

impl Providers {
    /// Ids [`ProvidersConfig::enabled`] accepts.
    pub fn known() -> impl Iterator<Item = &'static str> {
        REGISTRY.iter().map(|(id, _)| *id)
    }

    /// The providers enabled in `config`. `api` reaches the providers' configured endpoints;
    /// `sources` (the egress-policed client) fetches URLs the providers return, such as CDN
    /// links. An id no provider has is an error.
    pub fn from_config(
        config: &ProvidersConfig,
        api: &Egress,
        sources: &Egress,
    ) -> Result<Self, CompanionError> {
        if let Some(unknown) = config
            .enabled
            .keys()
            .find(|id| !Self::known().any(|k| k == id.as_str()))
        {
            return Err(CompanionError::Config(format!(
                "unknown provider {unknown:?} (known: {})",
                Self::known().collect::<Vec<_>>().join(", ")
            )));
        }
        let deps = Deps {
            api: api::Api::new(api.client().clone(), config.rate_limits.clone()),
            sources: sources.clone(),
            page_size: config.page_size,
        };
        let map = REGISTRY
            .iter()
            .filter_map(|(id, build)| {
                let setup = config.setup(id)?.clone();
                Some((*id, build(setup, &deps)))
            })
            .collect();
        Ok(Self { map })
    }

    /// The provider `id`, if enabled.
    pub fn get(&self, id: &str) -> Option<Arc<dyn Provider>> {
        self.map.get(id).cloned()
    }

    /// Whether no provider is enabled.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The enabled providers.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Provider>> {
        self.map.values()
    }
}

#[cfg(test)]
mod tests {
    use super::config::{Endpoints, OAuthApp};

    #[test]
    fn an_unknown_provider_id_is_refused_at_start() {
        let mut config = crate::CompanionConfig {
            secret: Some(ferry_auth::Secret::new("s")),
            ..crate::CompanionConfig::default()
        };
        let app = OAuthApp {
            key: "k".into(),
            secret: "s".into(),
        };
        config
            .providers
            .enable("dropbx", app, Endpoints::new("a", "t", "x"));
        let Err(err) = crate::router(config) else {
            panic!("an unknown provider id must be refused");
        };
        assert!(
            err.to_string().contains(
                "unknown provider \"dropbx\" (known: drive, instagram, box, unsplash, dropbox, onedrive, zoom, facebook, webdav)"
            ),
            "{err}"
        );
    }
}
