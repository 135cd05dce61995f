//! Cloud providers (Google Drive, Instagram) behind one [`Provider`] trait, served on
//! Companion's paths so released Uppy provider plugins work unchanged.
//!
//! A provider knows its OAuth endpoints and scopes, how to swap a code for a session, refresh
//! and revoke it, list a folder in Companion's item shape, open a file for download from any
//! byte, and fetch a thumbnail. Everything else (the OAuth dance, sealed tokens, the routes,
//! the transfer of a download to a destination) is shared. Adding Dropbox or OneDrive is one
//! file implementing [`Provider`] plus one line in [`Providers::from_config`].
//!
//! # Layout
//!
//! - [`config`]: [`ProvidersConfig`] (app keys, endpoint overrides, paging and backoff).
//! - [`api`]: the shared API client: bearer requests, backoff on rate limits, error mapping.
//! - [`drive`], [`instagram`]: the providers.
//! - [`session`]: the provider session sealed in the Uppy auth token.
//! - [`source`]: a provider download as a transfer [`crate::transfer::Source`].
//! - [`routes`]: `/{p}/list`, `/{p}/get`, `/{p}/logout`, `/{p}/refresh-token`,
//!   `/{p}/thumbnail`, and `GET /providers` (which providers are enabled).

pub mod api;
pub mod config;
pub mod drive;
pub mod instagram;
pub mod routes;
pub mod session;
pub mod source;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use config::ProvidersConfig;
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

/// What `/{p}/connect` needs to send the browser to the provider's consent page.
#[derive(Clone, Debug)]
pub struct OAuthSpec {
    pub authorize_url: String,
    /// Scopes, joined with `scope_separator`.
    pub scopes: Vec<&'static str>,
    pub scope_separator: &'static str,
    /// Extra authorize parameters (`access_type=offline`, ...).
    pub extra: Vec<(&'static str, &'static str)>,
    /// Whether the provider takes a PKCE (S256) challenge.
    pub pkce: bool,
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
        format!("{}{id}?t={t}", self.thumbnail_base)
    }
}

/// A cloud provider.
#[async_trait::async_trait]
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// The provider id in paths and tokens (`drive`).
    fn id(&self) -> &'static str;
    /// A human name (`Google Drive`).
    fn name(&self) -> &'static str;
    /// The folder a client lists first (`root`, `recent`).
    fn root(&self) -> &'static str;
    /// Authorize endpoint, scopes, PKCE support.
    fn oauth(&self) -> &OAuthSpec;
    /// The app's client id (public; sent in the authorize URL).
    fn client_id(&self) -> &str;
    /// Lifetime of the Uppy auth token, in seconds.
    fn token_max_age(&self) -> i64;
    /// Whether `/refresh-token` can renew a session of this provider.
    fn supports_refresh(&self) -> bool;

    /// Swaps an authorization code for a session (and fills in the username).
    async fn exchange_code(
        &self,
        code: &str,
        redirect_uri: &str,
        verifier: Option<&str>,
    ) -> Result<Session, ProviderError>;

    /// A session with a fresh access token (and the new refresh token if the provider rotated
    /// it). [`ProviderError::Auth`] when the refresh is refused.
    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError>;

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

/// The enabled providers, by id.
#[derive(Clone, Debug, Default)]
pub struct Providers {
    map: BTreeMap<&'static str, Arc<dyn Provider>>,
}

impl Providers {
    /// The providers whose app key and secret are configured. `api` reaches the providers'
    /// configured endpoints; `sources` (the egress-policed client) fetches URLs the providers
    /// return, such as CDN links.
    pub fn from_config(config: &ProvidersConfig, api: &Egress, sources: &Egress) -> Self {
        let mut map: BTreeMap<&'static str, Arc<dyn Provider>> = BTreeMap::new();
        let client = api::Api::new(api.client().clone(), config.backoff.clone());
        if let Some(app) = &config.google {
            let p = drive::Drive::new(
                app.clone(),
                config.google_endpoints.clone(),
                client.clone(),
                sources.clone(),
            )
            .with_page_size(config.page_size);
            map.insert(p.id(), Arc::new(p));
        }
        if let Some(app) = &config.instagram {
            let p = instagram::Instagram::new(
                app.clone(),
                config.instagram_endpoints.clone(),
                client.clone(),
                sources.clone(),
            )
            .with_page_size(config.page_size);
            map.insert(p.id(), Arc::new(p));
        }
        Self { map }
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
