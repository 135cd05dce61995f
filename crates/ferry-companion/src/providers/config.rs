//! Settings of the cloud providers: each provider's app credentials (enabled when set), every
//! endpoint overridable (tests point them at fakes, operators at proxies), this server's public
//! URL for redirect URIs and thumbnail links, page size and rate-limit backoff.

use std::time::Duration;

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

/// Google's endpoints.
#[derive(Clone, Debug)]
pub struct GoogleEndpoints {
    pub auth_url: String,
    pub token_url: String,
    /// Drive API base (`/drive/v3/...` is appended).
    pub api_url: String,
}

impl Default for GoogleEndpoints {
    fn default() -> Self {
        Self {
            auth_url: "https://accounts.google.com/o/oauth2/v2/auth".into(),
            token_url: "https://oauth2.googleapis.com/token".into(),
            api_url: "https://www.googleapis.com".into(),
        }
    }
}

impl GoogleEndpoints {
    /// The revoke endpoint: `revoke` beside the token endpoint
    /// (`https://oauth2.googleapis.com/revoke` by default).
    pub fn revoke_url(&self) -> String {
        match self.token_url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/revoke"),
            None => format!("{}/revoke", self.token_url),
        }
    }
}

/// Instagram's endpoints (Instagram API with Instagram Login).
#[derive(Clone, Debug)]
pub struct InstagramEndpoints {
    pub auth_url: String,
    pub token_url: String,
    /// Graph API base (`/me/media`, `/access_token`, ...).
    pub graph_url: String,
}

impl Default for InstagramEndpoints {
    fn default() -> Self {
        Self {
            auth_url: "https://www.instagram.com/oauth/authorize".into(),
            token_url: "https://api.instagram.com/oauth/access_token".into(),
            graph_url: "https://graph.instagram.com".into(),
        }
    }
}

/// Settings of all providers.
#[derive(Clone, Debug)]
pub struct ProvidersConfig {
    /// This server's public URL, path prefix included (`https://files.example.com/companion`):
    /// redirect URIs are `{public_url}/{p}/redirect`. Unset: `http://{Host}` of each request.
    pub public_url: Option<String>,
    /// Google Drive (`drive`), enabled when set.
    pub google: Option<OAuthApp>,
    pub google_endpoints: GoogleEndpoints,
    /// Instagram (`instagram`), enabled when set.
    pub instagram: Option<OAuthApp>,
    pub instagram_endpoints: InstagramEndpoints,
    /// Items asked per provider page (Drive allows 1000).
    pub page_size: u32,
    /// Waits before each retry of a rate-limited provider call (403 rate limit, 429).
    pub backoff: Vec<Duration>,
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
            google: None,
            google_endpoints: GoogleEndpoints::default(),
            instagram: None,
            instagram_endpoints: InstagramEndpoints::default(),
            page_size: 1000,
            backoff: [1000, 2000, 4000].map(Duration::from_millis).to_vec(),
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
        self.google.is_some() || self.instagram.is_some()
    }
}
