//! Settings of the cloud providers: the enabled providers by id, each with its app credentials
//! and its endpoints (every one overridable: tests point them at fakes, operators at proxies),
//! this server's public URL for redirect URIs and thumbnail links, page size and rate-limit
//! backoff. A new provider needs no new settings type: [`Endpoints`] holds the URLs any of
//! them uses.

use std::collections::BTreeMap;
use std::time::Duration;

use super::ratelimit::RateLimits;

/// An OAuth app registered with a provider.
#[derive(Clone)]
pub struct OAuthApp {
    pub key: String,
    /// Never logged.
    pub secret: String,
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("key", &self.key)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// A provider's endpoints. Each provider documents which it uses and what it appends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// The OAuth authorize page (the browser is sent there).
    pub auth_url: String,
    /// The OAuth token endpoint (code exchange, refresh).
    pub token_url: String,
    /// The API base (Drive's `www.googleapis.com`, Instagram's Graph host, ...).
    pub api_url: String,
    /// A separate download host, where the provider has one (Dropbox's content host).
    pub content_url: String,
}

impl Endpoints {
    /// Endpoints without a separate content host.
    pub fn new(auth_url: &str, token_url: &str, api_url: &str) -> Self {
        Self {
            auth_url: auth_url.into(),
            token_url: token_url.into(),
            api_url: api_url.into(),
            content_url: String::new(),
        }
    }

    /// The same endpoints with the download host `content_url`.
    pub fn with_content(mut self, content_url: &str) -> Self {
        self.content_url = content_url.into();
        self
    }

    /// `{api_url}{path}`, without a doubled slash.
    pub fn api(&self, path: &str) -> String {
        format!("{}{path}", self.api_url.trim_end_matches('/'))
    }

    /// The revoke endpoint beside the token endpoint: the token URL's last segment replaced by
    /// `revoke` (Google's `oauth2.googleapis.com/revoke`, Box's `api.box.com/oauth2/revoke`).
    pub fn revoke_url(&self) -> String {
        let token_url = &self.token_url;
        match token_url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/revoke"),
            None => format!("{token_url}/revoke"),
        }
    }

    /// `{content_url}{path}`, without a doubled slash.
    pub fn content(&self, path: &str) -> String {
        format!("{}{path}", self.content_url.trim_end_matches('/'))
    }
}

/// One enabled provider: its app and where it is reached.
#[derive(Clone, Debug)]
pub struct ProviderSetup {
    pub app: OAuthApp,
    pub endpoints: Endpoints,
}

/// Settings of all providers.
#[derive(Clone, Debug)]
pub struct ProvidersConfig {
    /// This server's public URL, path prefix included (`https://files.example.com/companion`):
    /// redirect URIs are `{public_url}/{p}/redirect`. Unset: `http://{Host}` of each request.
    pub public_url: Option<String>,
    /// The enabled providers by id (`drive`, `instagram`, ...); see [`ProvidersConfig::enable`].
    pub enabled: BTreeMap<String, ProviderSetup>,
    /// Items asked per provider page (Drive allows 1000).
    pub page_size: u32,
    /// How rate-limited provider calls are waited out (`Retry-After`, backoff, caps).
    pub rate_limits: RateLimits,
    /// How long a login may take, from `/connect` to `/redirect`.
    pub login_timeout: Duration,
    /// How long a token handed off on the auth socket waits for a late socket.
    pub handoff_keep: Duration,
    /// Auth sockets one client address may hold open at once (a page opens one per sign-in).
    pub auth_sockets_per_client: usize,
    /// Auth sockets open at once in all, well below a default descriptor limit (1024).
    pub auth_sockets: usize,
}

impl Default for ProvidersConfig {
    fn default() -> Self {
        Self {
            public_url: None,
            enabled: BTreeMap::new(),
            page_size: 1000,
            rate_limits: RateLimits::default(),
            login_timeout: Duration::from_secs(600),
            handoff_keep: Duration::from_secs(60),
            auth_sockets_per_client: 16,
            auth_sockets: 512,
        }
    }
}

impl ProvidersConfig {
    /// Whether any provider is enabled.
    pub fn any_enabled(&self) -> bool {
        !self.enabled.is_empty()
    }

    /// The ids of the enabled providers, in order (`box, drive`), for messages.
    pub fn enabled_ids(&self) -> String {
        self.enabled
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Enables the provider `id` with `app` at `endpoints`.
    pub fn enable(&mut self, id: &str, app: OAuthApp, endpoints: Endpoints) -> &mut Self {
        self.enabled
            .insert(id.to_owned(), ProviderSetup { app, endpoints });
        self
    }

    /// The provider `id`'s setup, if enabled.
    pub fn setup(&self, id: &str) -> Option<&ProviderSetup> {
        self.enabled.get(id)
    }
}
